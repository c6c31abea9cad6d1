-- A schema v3 tilecast database: schema-v1.sql migrated by tilecast 0.1.0 at schema v3
-- (tilecast db migrate), plus two attention rows of v2 columns (a GQA decode, a
-- windowed deterministic backward) typed in by hand, to test migrating v3 files
-- (tests/test-db.c). The attention times are not measurements.
PRAGMA application_id = 1413694530;
PRAGMA user_version = 3;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta VALUES('created_at','2026-12-02T02:52:38Z');
INSERT INTO meta VALUES('last_writer_version','0.1.0');
INSERT INTO meta VALUES('schema_version','3');
INSERT INTO meta VALUES('writer_version','0.1.0');
CREATE TABLE run (
  id INTEGER PRIMARY KEY,
  gpu_id TEXT NOT NULL REFERENCES gpu(id),
  kind TEXT NOT NULL CHECK (kind = 'collected' OR kind = 'imported'),
  host TEXT, device_name TEXT, device_uuid TEXT, driver_version TEXT,
  runtime_version TEXT, blas_version TEXT, backend TEXT, sweep_name TEXT,
  sweep_hash TEXT, config_hash TEXT, shard TEXT, timing TEXT, source TEXT,
  licence TEXT, clocks_json TEXT, tilecast_version TEXT, started_at TEXT,
  ended_at TEXT
);
INSERT INTO run VALUES(1,'a100-sxm4-80gb','imported',NULL,NULL,NULL,NULL,NULL,NULL,'csv',NULL,NULL,'4e18549caac2561c',NULL,'profiler-median','microsoft/vidur@7d47513:data/profiling/compute/a100/codellama/CodeLlama-34b-Instruct-hf/mlp.csv','MIT',NULL,'0.1.0','2026-12-02T02:52:38Z','2026-12-02T02:52:38Z');
CREATE TABLE gemm (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES run(id),
  op TEXT CHECK (op IS NULL OR op = 'mm' OR op = 'bmm' OR op = 'linear'),
  dtype TEXT NOT NULL CHECK (dtype = 'fp64' OR dtype = 'fp32' OR dtype = 'tf32' OR dtype = 'fp16' OR dtype = 'bf16' OR dtype = 'fp8' OR dtype = 'int8'),
  dtype_c TEXT NOT NULL CHECK (dtype_c = 'fp64' OR dtype_c = 'fp32' OR dtype_c = 'tf32' OR dtype_c = 'fp16' OR dtype_c = 'bf16' OR dtype_c = 'fp8' OR dtype_c = 'int8'),
  compute TEXT NOT NULL CHECK (compute = 'fp64' OR compute = 'fp32' OR compute = 'tf32' OR compute = 'fp16' OR compute = 'bf16' OR compute = 'fp8' OR compute = 'int8'),
  layout TEXT NOT NULL CHECK (layout = 'NN' OR layout = 'NT' OR layout = 'TN' OR layout = 'TT'),
  m INTEGER NOT NULL CHECK (m > 0), n INTEGER NOT NULL CHECK (n > 0),
  k INTEGER NOT NULL CHECK (k > 0), batch INTEGER NOT NULL CHECK (batch > 0),
  time_us REAL CHECK (time_us IS NULL OR time_us > 0),
  min_us REAL, spread_pct REAL, reps INTEGER,
  tile_m INTEGER, tile_n INTEGER, tile_k INTEGER, stages INTEGER, split_k INTEGER,
  cluster_m INTEGER, cluster_n INTEGER, swizzle INTEGER, algo TEXT,
  status TEXT NOT NULL DEFAULT 'ok'
    CHECK (status = 'ok' OR status = 'oom' OR status = 'unsupported' OR status = 'error'),
  message TEXT,
  CHECK (status <> 'ok' OR time_us IS NOT NULL),
  UNIQUE (run_id, m, n, k, batch, dtype, dtype_c, compute, layout)
);
INSERT INTO gemm VALUES(1,1,'linear','fp16','fp16','fp32','NT',4096,10240,8192,1,2842.0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO gemm VALUES(2,1,'linear','fp16','fp16','fp32','NT',4096,8192,8192,1,2367.0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO gemm VALUES(3,1,'linear','fp16','fp16','fp32','NT',4096,44032,8192,1,12126.5,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO gemm VALUES(4,1,'linear','fp16','fp16','fp32','NT',4096,8192,22016,1,6201.4999999999999998,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
CREATE TABLE calibration (
  id INTEGER PRIMARY KEY,
  gpu_id TEXT NOT NULL, dtype TEXT NOT NULL CHECK (dtype = 'fp64' OR dtype = 'fp32' OR dtype = 'tf32' OR dtype = 'fp16' OR dtype = 'bf16' OR dtype = 'fp8' OR dtype = 'int8'),
  layout TEXT CHECK (layout IS NULL OR (layout = 'NN' OR layout = 'NT' OR layout = 'TN' OR layout = 'TT')),
  model_version INTEGER NOT NULL, params_json TEXT NOT NULL,
  n_rows INTEGER NOT NULL CHECK (n_rows >= 0),
  median_ape_pct REAL, p90_ape_pct REAL, log_resid_sd REAL,
  source_gpu TEXT, tilecast_version TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE attention (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES run(id),
  impl TEXT NOT NULL CHECK (impl = 'unfused' OR impl = 'flash' OR impl = 'flash2' OR impl = 'flash3' OR impl = 'flash4' OR impl = 'cudnn' OR impl = 'cudnn_oss'),
  dtype TEXT NOT NULL CHECK (dtype = 'fp64' OR dtype = 'fp32' OR dtype = 'tf32' OR dtype = 'fp16' OR dtype = 'bf16' OR dtype = 'fp8' OR dtype = 'int8'),
  batch INTEGER NOT NULL CHECK (batch > 0), heads INTEGER NOT NULL CHECK (heads > 0),
  kv_heads INTEGER NOT NULL CHECK (kv_heads > 0),
  seq_q INTEGER NOT NULL CHECK (seq_q > 0), seq_kv INTEGER NOT NULL CHECK (seq_kv > 0),
  head_dim INTEGER NOT NULL CHECK (head_dim > 0),
  head_dim_vo INTEGER NOT NULL CHECK (head_dim_vo > 0),
  sliding_window INTEGER NOT NULL DEFAULT 0 CHECK (sliding_window >= 0),
  causal INTEGER NOT NULL CHECK (causal = 0 OR causal = 1),
  backward INTEGER NOT NULL CHECK (backward = 0 OR backward = 1),
  deterministic INTEGER NOT NULL DEFAULT 0
    CHECK (deterministic = 0 OR (deterministic = 1 AND backward = 1)),
  time_us REAL CHECK (time_us IS NULL OR time_us > 0),
  min_us REAL, spread_pct REAL, reps INTEGER,
  scores_us REAL, softmax_us REAL, values_us REAL,
  status TEXT NOT NULL DEFAULT 'ok'
    CHECK (status = 'ok' OR status = 'oom' OR status = 'unsupported' OR status = 'error'),
  message TEXT,
  CHECK (status <> 'ok' OR time_us IS NOT NULL),
  CHECK (sliding_window = 0 OR causal = 1),
  UNIQUE (run_id, batch, heads, kv_heads, seq_q, seq_kv, head_dim, head_dim_vo,
          sliding_window, dtype, impl, causal, backward, deterministic)
);
INSERT INTO attention VALUES(1,1,'flash','bf16',2,16,16,2048,2048,128,128,0,1,0,0,300.0,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO attention VALUES(2,1,'unfused','bf16',2,16,16,2048,2048,128,128,0,1,0,0,900.0,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO attention VALUES(3,1,'flash','bf16',2,16,16,2048,2048,128,128,0,1,1,0,800.0,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO attention VALUES(4,1,'cudnn','bf16',1,32,8,1,8192,128,128,0,0,0,0,40.0,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
INSERT INTO attention VALUES(5,1,'flash2','bf16',2,16,16,2048,2048,128,128,128,1,1,1,700.0,NULL,NULL,NULL,NULL,NULL,NULL,'ok',NULL);
CREATE TABLE gpu (
  id TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 63),
  name TEXT NOT NULL, vendor TEXT NOT NULL CHECK (vendor = 'nvidia' OR vendor = 'amd' OR vendor = 'cpu'),
  arch TEXT NOT NULL, compute_capability TEXT NOT NULL,
  units INTEGER NOT NULL,
  clock_tensor_mhz REAL NOT NULL, clock_vector_mhz REAL NOT NULL,
  clock_base_mhz REAL NOT NULL,
  peak_fp64_tflops REAL NOT NULL, peak_fp32_tflops REAL NOT NULL,
  peak_tf32_tflops REAL NOT NULL, peak_fp16_tflops REAL NOT NULL,
  peak_bf16_tflops REAL NOT NULL, peak_fp8_tflops REAL NOT NULL,
  peak_int8_tflops REAL NOT NULL,
  flops_per_clk_fp64 REAL NOT NULL, flops_per_clk_fp32 REAL NOT NULL,
  flops_per_clk_tf32 REAL NOT NULL, flops_per_clk_fp16 REAL NOT NULL,
  flops_per_clk_bf16 REAL NOT NULL, flops_per_clk_fp8 REAL NOT NULL,
  flops_per_clk_int8 REAL NOT NULL,
  mem_bw_gbps REAL NOT NULL, mem_gb REAL NOT NULL, l2_bytes INTEGER NOT NULL,
  tdp_w REAL NOT NULL, warp_size INTEGER NOT NULL,
  max_threads_per_sm INTEGER NOT NULL, max_warps_per_sm INTEGER NOT NULL,
  max_blocks_per_sm INTEGER NOT NULL, max_threads_per_block INTEGER NOT NULL,
  regs_per_sm INTEGER NOT NULL, max_regs_per_block INTEGER NOT NULL,
  max_regs_per_thread INTEGER NOT NULL, reg_alloc_unit INTEGER NOT NULL,
  smem_per_sm_bytes INTEGER NOT NULL, smem_per_block_max_bytes INTEGER NOT NULL,
  reserved_smem_per_block_bytes INTEGER NOT NULL,
  smem_alloc_unit_bytes INTEGER NOT NULL,
  sources TEXT NOT NULL, flags TEXT NOT NULL,
  spec_json TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO gpu VALUES('a100-sxm4-80gb','NVIDIA A100 SXM4 80GB','nvidia','ampere','sm_80',108,1410.0,1410.0,0.0,19.5,19.5,156.0,312.0,312.0,0.0,624.0,128.0,128.0,1024.0,2048.0,2048.0,0.0,4096.0,2039.0,80.0,41943040,400.0,32,2048,64,32,1024,65536,65536,255,256,167936,166912,1024,128,'NV-A100-DS,NV-AMPERE-WP,GK-A100,NV-FORUM-TC,NV-CCCL,NV-AMPERE-TG,NV-CUDA-OCC','','{"id":"a100-sxm4-80gb","name":"NVIDIA A100 SXM4 80GB","vendor":"nvidia","arch":"ampere","compute_capability":"sm_80","units":108,"clock_tensor_mhz":1410.0,"clock_vector_mhz":1410.0,"clock_base_mhz":0.0,"peak_fp64_tflops":19.5,"peak_fp32_tflops":19.5,"peak_tf32_tflops":156.0,"peak_fp16_tflops":312.0,"peak_bf16_tflops":312.0,"peak_fp8_tflops":0.0,"peak_int8_tflops":624.0,"flops_per_clk_fp64":128.0,"flops_per_clk_fp32":128.0,"flops_per_clk_tf32":1024.0,"flops_per_clk_fp16":2048.0,"flops_per_clk_bf16":2048.0,"flops_per_clk_fp8":0.0,"flops_per_clk_int8":4096.0,"mem_bw_gbps":2039.0,"mem_gb":80.0,"l2_bytes":41943040,"tdp_w":400.0,"warp_size":32,"max_threads_per_sm":2048,"max_warps_per_sm":64,"max_blocks_per_sm":32,"max_threads_per_block":1024,"regs_per_sm":65536,"max_regs_per_block":65536,"max_regs_per_thread":255,"reg_alloc_unit":256,"smem_per_sm_bytes":167936,"smem_per_block_max_bytes":166912,"reserved_smem_per_block_bytes":1024,"smem_alloc_unit_bytes":128,"sources":"NV-A100-DS,NV-AMPERE-WP,GK-A100,NV-FORUM-TC,NV-CCCL,NV-AMPERE-TG,NV-CUDA-OCC","flags":""}');
CREATE INDEX run_gpu ON run (gpu_id, config_hash);
CREATE INDEX calibration_key ON calibration (gpu_id, dtype, model_version);
CREATE VIEW gemm_tflops AS
  SELECT g.id, g.run_id, r.gpu_id, r.kind, r.timing, g.op, g.dtype, g.dtype_c,
         g.compute, g.layout, g.m, g.n, g.k, g.batch, g.time_us,
         2.0 * g.m * g.n * g.k * g.batch / (g.time_us * 1e6) AS tflops
  FROM gemm g JOIN run r ON r.id = g.run_id WHERE g.status = 'ok';
CREATE VIEW gemm_best AS
  SELECT r.gpu_id, g.dtype, g.layout, g.m, g.n, g.k, g.batch,
         MIN(g.time_us) AS time_us, g.id AS gemm_id, g.run_id, r.timing,
         2.0 * g.m * g.n * g.k * g.batch / (MIN(g.time_us) * 1e6) AS tflops,
         COUNT(*) AS measurements
  FROM gemm g JOIN run r ON r.id = g.run_id WHERE g.status = 'ok'
  GROUP BY r.gpu_id, g.dtype, g.layout, g.m, g.n, g.k, g.batch;
CREATE VIEW attention_best AS
  SELECT r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,
         a.head_dim, a.head_dim_vo, a.sliding_window, a.causal, a.backward,
         a.deterministic, MIN(a.time_us) AS time_us, a.id AS attention_id, a.run_id,
         r.timing
  FROM attention a JOIN run r ON r.id = a.run_id WHERE a.status = 'ok'
  GROUP BY r.gpu_id, a.impl, a.dtype, a.batch, a.heads, a.kv_heads, a.seq_q,
           a.seq_kv, a.head_dim, a.head_dim_vo, a.sliding_window, a.causal,
           a.backward, a.deterministic;
COMMIT;
