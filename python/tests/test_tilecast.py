"""The Python binding against the built libtilecast (run by tests/python.sh,
which points $TILECAST_LIBRARY at the build tree)."""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import tilecast

GPU = "a100-sxm4-80gb"
H100 = "h100-sxm5-80gb"
SOURCE_ROOT = os.environ.get("TILECAST_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TILECAST_BIN = os.environ.get("TILECAST_BIN")
SHARED = os.environ.get("TILECAST_MEASURED_DATA")
PREDICTION_SOURCES = ("calibrated", "transferred", "analytical")


def run_cli(*args):
    """Runs the tilecast command; (exit code, stdout, stderr). A sanitizer
    runtime preloaded for python (tests/python.sh) must not reach the
    command, which links its own."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([TILECAST_BIN] + list(args), capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def analytical():
    return tilecast.predictor(analytical=True)


class TestLibrary(unittest.TestCase):
    def test_version_matches_the_command(self):
        self.assertRegex(tilecast.version(), r"^\d+\.\d+\.\d+")
        if TILECAST_BIN:
            rc, out, _ = run_cli("--version")
            self.assertEqual(rc, 0)
            self.assertEqual(out.strip(), "tilecast " + tilecast.version())

    def test_api_version(self):
        major, minor, patch = tilecast.api_version()
        self.assertEqual(major, tilecast._lib.API_VERSION_MAJOR)
        self.assertGreaterEqual(minor, 0)

    def test_library_found_through_environment(self):
        env = os.environ.get("TILECAST_LIBRARY")
        if env:
            self.assertEqual(os.path.realpath(tilecast.library_path()), os.path.realpath(env))

    def test_dtype_names(self):
        self.assertEqual(tilecast.dtype_names(),
                         ["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"])

    def test_error_hierarchy(self):
        self.assertTrue(issubclass(tilecast.InvalidError, ValueError))
        self.assertTrue(issubclass(tilecast.NotFoundError, LookupError))
        self.assertTrue(issubclass(tilecast.SchemaError, tilecast.DatabaseError))
        self.assertTrue(issubclass(tilecast.TilecastIOError, OSError))
        for cls in (tilecast.InvalidError, tilecast.SchemaError, tilecast.RangeError):
            self.assertTrue(issubclass(cls, tilecast.TilecastError))


class TestSpecs(unittest.TestCase):
    def test_gpu(self):
        g = tilecast.gpu(H100)
        self.assertEqual(g["id"], H100)
        self.assertEqual(g["units"], 132)
        self.assertEqual(g["vendor"], "nvidia")
        self.assertEqual(g["arch"], "hopper")
        self.assertGreater(g["peak_tflops"]["bf16"], 900)
        self.assertIsInstance(g["sources"], list)
        self.assertTrue(g["sources"])

    def test_specs_lists_every_shipped_file(self):
        ids = {g["id"] for g in tilecast.specs()}
        shipped = {f[:-5] for f in os.listdir(os.path.join(SOURCE_ROOT, "gpu_specs"))
                   if f.endswith(".yaml")}
        self.assertTrue(shipped)
        self.assertTrue(shipped <= ids, shipped - ids)

    def test_unknown_gpu(self):
        with self.assertRaises(tilecast.NotFoundError) as cm:
            tilecast.gpu("no-such-gpu")
        self.assertIn("no-such-gpu", str(cm.exception))
        self.assertIn(H100, str(cm.exception))  # lists the known ids
        self.assertEqual(cm.exception.code, -5)

    def test_gpu_by_name(self):
        # any case, or a prefix of exactly one id, as the command takes them
        self.assertEqual(tilecast.gpu("H100-SXM5-80GB")["id"], H100)
        self.assertEqual(tilecast.gpu("a100-pcie-4")["id"], "a100-pcie-40gb")
        with self.assertRaises(tilecast.NotFoundError) as cm:
            tilecast.gpu("h100")
        self.assertIn("h100-pcie-80gb or h100-sxm5-80gb", str(cm.exception))
        with self.assertRaises(tilecast.NotFoundError) as cm:
            tilecast.gpu("h100-sxm-80gb")
        self.assertIn("did you mean h100-sxm5-80gb?", str(cm.exception))

    def test_specs_dir_adds_a_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(SOURCE_ROOT, "gpu_specs", H100 + ".yaml")) as f:
                text = f.read()
            with open(os.path.join(d, "my-gpu.yaml"), "w") as f:
                f.write(text.replace("id: " + H100, "id: my-gpu"))
            g = tilecast.gpu("my-gpu", specs_dir=d)
            self.assertEqual(g["units"], 132)

    def test_parse_spec_file_error_names_the_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("id: [unclosed\n")
        try:
            with self.assertRaises(tilecast.TilecastError) as cm:
                tilecast.parse_spec_file(f.name)
            self.assertIn(os.path.basename(f.name), str(cm.exception))
        finally:
            os.unlink(f.name)


class TestGemm(unittest.TestCase):
    def test_single(self):
        r = analytical().predict_gemm(GPU, 4096, 4096, 4096, dtype="fp16")
        self.assertEqual(r["source"], "analytical")
        self.assertEqual(r["kind"], "prediction")
        self.assertGreater(r["time_us"], 0)
        # TFLOP/s is 2mnk / time
        self.assertAlmostEqual(r["tflops"], 2 * 4096 ** 3 / r["time_us"] / 1e6,
                               delta=r["tflops"] * 1e-6)
        lo, hi = r["interval_us"]
        self.assertLessEqual(lo, r["time_us"])
        self.assertGreaterEqual(hi, r["time_us"])
        self.assertLess(r["frac_peak"], 1.0)
        e = r["explanation"]
        for key in ("tile_m", "tile_n", "waves", "occupancy", "bound", "align", "kernel"):
            self.assertIn(key, e)
        self.assertIn(e["bound"], ("compute", "memory", "latency"))
        self.assertGreater(e["tiles"], 0)

    def test_matches_the_command(self):
        if not TILECAST_BIN:
            self.skipTest("TILECAST_BIN not set")
        r = analytical().predict_gemm(H100, 8192, 10944, 4096, dtype="bf16", layout="NT")
        rc, out, err = run_cli("predict", "gemm", "--gpu", H100, "--dtype", "bf16",
                               "--layout", "NT", "--analytical", "--json",
                               "8192", "10944", "4096")
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        doc = doc[0] if isinstance(doc, list) else doc
        self.assertAlmostEqual(doc["time_us"], r["time_us"], delta=r["time_us"] * 1e-6)

    def test_module_level_and_predictor_agree(self):
        a = tilecast.predict_gemm(GPU, 1024, 2048, 512, dtype="bf16", analytical=True)
        b = analytical().predict_gemm(GPU, 1024, 2048, 512, dtype="bf16")
        self.assertEqual(a["time_us"], b["time_us"])

    def test_larger_is_slower(self):
        p = analytical()
        small = p.predict_gemm(GPU, 2048, 2048, 2048)["time_us"]
        big = p.predict_gemm(GPU, 8192, 8192, 8192)["time_us"]
        self.assertGreater(big, 10 * small)

    def test_batch_argument_counts_gemms(self):
        p = analytical()
        one = p.predict_gemm(GPU, 512, 512, 512, batch=1)
        many = p.predict_gemm(GPU, 512, 512, 512, batch=64)
        self.assertEqual(many["batch"], 64)
        self.assertGreater(many["time_us"], one["time_us"])

    def test_bad_values(self):
        p = analytical()
        with self.assertRaises(tilecast.TilecastError) as cm:
            p.predict_gemm(GPU, 0, 10, 10)
        self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(tilecast.InvalidError) as cm:
            p.predict_gemm(GPU, 10, 10, 10, dtype="fp7")
        self.assertIn("fp7", str(cm.exception))
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm(GPU, 10, 10, 10, layout="XX")
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm(GPU, 10.5, 10, 10)
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm(GPU, 1 << 70, 10, 10)
        with self.assertRaises(tilecast.NotFoundError):
            p.predict_gemm("no-such-gpu", 10, 10, 10)

    def test_unsupported_dtype(self):
        with self.assertRaises(tilecast.TilecastError) as cm:
            analytical().predict_gemm("v100-sxm2-32gb", 1024, 1024, 1024, dtype="bf16")
        self.assertIn("bf16", str(cm.exception))


class TestGemmBatch(unittest.TestCase):
    SHAPES = [(4096, 4096, 4096), (1, 4096, 4096), (8192, 10944, 4096), (2047, 2049, 1023),
              (64, 64, 64), (12288, 50257, 2048)]

    def test_same_as_single_calls(self):
        p = analytical()
        res = p.predict_gemm_batch(GPU, self.SHAPES, dtype="fp16", layout="NT")
        self.assertEqual(res["m"], [s[0] for s in self.SHAPES])
        self.assertEqual(res["k"], [s[2] for s in self.SHAPES])
        for i, (m, n, k) in enumerate(self.SHAPES):
            one = p.predict_gemm(GPU, m, n, k, dtype="fp16", layout="NT")
            self.assertEqual(res["time_us"][i], one["time_us"])
            self.assertEqual(res["tflops"][i], one["tflops"])
            self.assertEqual(res["source"][i], one["source"])
            self.assertEqual(res["lo_us"][i], one["interval_us"][0])
        self.assertEqual(set(res["source"]), {"analytical"})
        self.assertEqual(res["gpu"], [GPU] * len(self.SHAPES))
        self.assertEqual(res["layout"], ["NT"] * len(self.SHAPES))

    def test_batch_column_and_dict_input(self):
        p = analytical()
        rows = [(512, 512, 512, 1), (512, 512, 512, 32)]
        res = p.predict_gemm_batch(GPU, rows)
        self.assertEqual(res["batch"], [1, 32])
        self.assertEqual(res["time_us"][1],
                         p.predict_gemm(GPU, 512, 512, 512, batch=32)["time_us"])
        cols = p.predict_gemm_batch(GPU, {"m": [512, 512], "n": [512, 512], "k": [512, 512],
                                          "batch": [1, 32]})
        self.assertEqual(cols["time_us"], res["time_us"])
        gen = p.predict_gemm_batch(GPU, (r for r in rows))
        self.assertEqual(gen["time_us"], res["time_us"])

    def test_many_rows_across_blocks(self):
        """More rows than one library call takes: results stay in order and
        a failing row deep in the list is named by its index."""
        p = analytical()
        rows = [(64 + i % 4096, 128 + i % 777, 256 + i % 333) for i in range(20000)]
        res = p.predict_gemm_batch(GPU, rows)
        self.assertEqual(len(res["time_us"]), 20000)
        self.assertEqual(res["n"][19999], rows[19999][1])
        for i in (0, 8191, 8192, 16385, 19999):
            self.assertEqual(res["time_us"][i], p.predict_gemm(GPU, *rows[i])["time_us"])
        rows[17000] = (64, 64, 0)
        with self.assertRaises(tilecast.TilecastError) as cm:
            p.predict_gemm_batch(GPU, rows)
        self.assertIn("row 17000 ", str(cm.exception))
        kept = p.predict_gemm_batch(GPU, rows, errors="keep")
        self.assertEqual([i for i, e in enumerate(kept["error"]) if e], [17000])
        self.assertEqual(kept["time_us"][16999], res["time_us"][16999])
        self.assertEqual(kept["time_us"][17001], res["time_us"][17001])

    def test_empty(self):
        res = analytical().predict_gemm_batch(GPU, [])
        self.assertEqual(res["time_us"], [])

    def test_errors_raise_with_the_row(self):
        with self.assertRaises(tilecast.TilecastError) as cm:
            analytical().predict_gemm_batch(GPU, [(64, 64, 64), (64, -1, 64), (8, 8, 8)])
        self.assertIn("row 1", str(cm.exception))
        self.assertIn("-1", str(cm.exception))

    def test_errors_keep(self):
        res = analytical().predict_gemm_batch(GPU, [(64, 64, 64), (64, 0, 64)], errors="keep")
        self.assertGreater(res["time_us"][0], 0)
        self.assertTrue(math.isnan(res["time_us"][1]))
        self.assertIsNone(res["error"][0])
        self.assertIsInstance(res["error"][1], str)
        self.assertIsNone(res["source"][1])

    def test_malformed_shapes(self):
        p = analytical()
        with self.assertRaises(tilecast.InvalidError) as cm:
            p.predict_gemm_batch(GPU, [(1, 2, 3), (1, 2)])
        self.assertIn("row 1", str(cm.exception))
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm_batch(GPU, [(1, 2)])
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm_batch(GPU, [(1, 2, "x")])
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm_batch(GPU, {"m": [1], "n": [1]})
        with self.assertRaises(tilecast.InvalidError):
            p.predict_gemm_batch(GPU, [(1, 2, 3)], errors="ignore")

    def test_frame_needs_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError) as cm:
                analytical().predict_gemm_batch(GPU, [(8, 8, 8)], as_frame=True)
            self.assertIn("pandas", str(cm.exception))
        else:
            df = analytical().predict_gemm_batch(GPU, [(8, 8, 8)], as_frame=True)
            self.assertEqual(list(df["m"]), [8])


class TestAttention(unittest.TestCase):
    def test_flash(self):
        p = analytical()
        kw = dict(batch=4, heads=32, seq=4096, head_dim=128, dtype="bf16", impl="flash")
        full = p.predict_attention(H100, **kw)
        causal = p.predict_attention(H100, causal=True, **kw)
        bwd = p.predict_attention(H100, backward=True, **kw)
        self.assertEqual(full["source"], "analytical")
        self.assertEqual(full["kind"], "prediction")
        self.assertEqual(full["impl"], "flash")
        self.assertLess(causal["time_us"], full["time_us"])
        self.assertGreater(bwd["time_us"], 1.5 * full["time_us"])
        # 4 s^2 d FLOPs per head, forward, non-causal
        self.assertAlmostEqual(full["flops"], 4 * 4096 ** 2 * 128 * 4 * 32,
                               delta=full["flops"] * 1e-9)

    def test_unfused_has_parts(self):
        r = analytical().predict_attention(GPU, batch=1, heads=16, seq=2048, head_dim=64,
                                           impl="unfused")
        self.assertGreater(r["scores_us"], 0)
        self.assertGreater(r["softmax_us"], 0)
        self.assertGreater(r["values_us"], 0)

    def test_memop(self):
        p = analytical()
        ln = p.predict_memop(GPU, kind="layernorm", rows=4096, cols=4096, dtype="bf16")
        self.assertEqual((ln["kernel"], ln["kind"], ln["source"]),
                         ("layernorm", "prediction", "analytical"))
        self.assertEqual(ln["passes"], 3)
        self.assertEqual(ln["bytes"], 3 * 4096 * 4096 * 2)
        rms = p.predict_memop(GPU, kind="RMSNorm", rows=4096, cols=4096, dtype="bf16")
        self.assertLess(rms["time_us"], ln["time_us"])
        self.assertEqual(tilecast.predict_memop(GPU, kind="layernorm", rows=4096, cols=4096,
                                                dtype="bf16")["time_us"], ln["time_us"])
        with self.assertRaises(tilecast.InvalidError):
            p.predict_memop(GPU, kind="conv", rows=1, cols=1)
        with self.assertRaises(tilecast.RangeError):
            p.predict_memop(GPU, kind="unary", rows=0, cols=1)

    def test_impl_names(self):
        p = analytical()
        kw = dict(batch=2, heads=16, seq=2048, head_dim=128, dtype="bf16")
        for impl in ("flash", "flash2", "flash4", "cudnn", "FLASH2"):
            r = p.predict_attention(GPU, impl=impl, **kw)
            self.assertEqual(r["impl"], impl.lower())
            self.assertGreater(r["time_us"], 0)
        r = p.predict_attention(GPU, impl="cudnn", head_dim_vo=64, window=128, causal=True,
                                kv_splits=1, **kw)
        self.assertEqual(r["head_dim_vo"], 64)
        self.assertEqual(r["window"], 128)
        self.assertEqual(r["kernel"], "cudnn")

    def test_paged_kv_cache(self):
        p = analytical()
        kw = dict(batch=8, heads=64, kv_heads=8, seq=1, seq_kv=8192, head_dim=128,
                  dtype="bf16", impl="cudnn")
        flat = p.predict_attention(GPU, **kw)
        paged = p.predict_attention(GPU, page_size=16, **kw)
        self.assertEqual(paged["page_size"], 16)
        self.assertEqual(paged["kv_dtype"], "bf16")
        self.assertGreaterEqual(paged["time_us"], flat["time_us"])
        self.assertGreater(paged["interval_us"][1], flat["interval_us"][1])
        with self.assertRaises(tilecast.UnsupportedError) as cm:
            p.predict_attention(GPU, kv_dtype="fp8", **kw)
        self.assertIn("--dtype fp8", str(cm.exception))

    def test_bad_impl(self):
        with self.assertRaises(tilecast.InvalidError):
            analytical().predict_attention(GPU, batch=1, heads=1, seq=1, head_dim=64,
                                           impl="magic")


MODEL = {"name": "test-1b", "hidden": 2048, "heads": 16, "layers": 24, "vocab": 50304,
         "seq": 2048, "micro_batch": 4, "tp": 1, "dtype": "fp16", "attention": "flash",
         "mode": "training", "activation": "gelu", "norm": "layernorm"}


class TestModel(unittest.TestCase):
    def test_dict_and_yaml_agree(self):
        p = analytical()
        from_dict = p.predict_model(MODEL, GPU)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            for key, value in MODEL.items():
                f.write("%s: %s\n" % (key, value))
        try:
            from_file = p.predict_model(f.name, GPU)
        finally:
            os.unlink(f.name)
        self.assertEqual(from_dict["step_time_us"], from_file["step_time_us"])
        self.assertEqual(from_dict["config"], from_file["config"])
        self.assertEqual(from_dict["config"]["ffn"], 4 * 2048)

    def test_result(self):
        r = analytical().predict_model(MODEL, GPU)
        self.assertIn(r["source"], PREDICTION_SOURCES)
        self.assertEqual(r["kind"], "prediction")
        names = [op["name"] for op in r["ops"]]
        self.assertIn("qkv", names)
        layer = sum(op["time_us"] for op in r["ops"] if op["in_layer"])
        self.assertAlmostEqual(layer, r["layer_time_us"], delta=r["layer_time_us"] * 1e-6)
        self.assertGreater(r["step_time_us"], 24 * r["layer_time_us"])
        self.assertGreater(r["mfu"], 0)
        self.assertLess(r["mfu"], 1)
        self.assertAlmostEqual(r["tokens_per_s"], 4 * 2048 / (r["step_time_us"] * 1e-6),
                               delta=r["tokens_per_s"] * 1e-6)

    def test_overrides(self):
        p = analytical()
        tp1 = p.predict_model(MODEL, GPU)
        tp2 = p.predict_model(MODEL, GPU, tp=2)
        self.assertEqual(tp2["config"]["tp"], 2)
        self.assertLess(tp2["layer_time_us"], tp1["layer_time_us"])

    def test_pipeline_and_nodes(self):
        p = analytical()
        one = p.predict_model(MODEL, GPU)
        pipe = p.predict_model(dict(MODEL, pp=4, microbatches=8, dp=2), GPU)
        self.assertEqual((pipe["config"]["pp"], pipe["config"]["microbatches"]), (4, 8))
        self.assertEqual(pipe["nodes"], 1)
        self.assertGreater(pipe["bubble_us"], 0)
        self.assertIn("pp_send", [op["name"] for op in pipe["ops"]])
        self.assertAlmostEqual(pipe["tokens_per_s"], 8 * 4 * 2048 / (pipe["step_time_us"] * 1e-6),
                               delta=pipe["tokens_per_s"] * 1e-6)
        self.assertEqual(one["bubble_us"], 0)
        # two GPUs a node: the 8 GPUs take 4 nodes, the sends cross the network
        apart = p.predict_model(dict(MODEL, pp=4, microbatches=8, dp=2), GPU, gpus_per_node=2)
        self.assertEqual(apart["nodes"], 4)
        self.assertGreater(apart["p2p_us"], pipe["p2p_us"])
        # a PCIe card names no network: refused until one is given
        with self.assertRaises(tilecast.UnsupportedError):
            p.predict_model(dict(MODEL, pp=4), "a100-pcie-80gb", gpus_per_node=2)
        r = p.predict_model(dict(MODEL, pp=4), "a100-pcie-80gb", gpus_per_node=2, nic_gbps=12.5)
        self.assertEqual(r["nodes"], 2)
        with self.assertRaises(tilecast.InvalidError):
            p.predict_model(dict(MODEL, pp=5), GPU)  # 24 layers

    def test_decode(self):
        # one new token per sequence over a 1024-token cache: 4 tokens a step,
        # the logits of 4 rows, the same prediction the command's --decode gives
        p = analytical()
        d = p.predict_model(dict(MODEL, mode="inference"), GPU, decode_context=1024)
        self.assertAlmostEqual(d["tokens_per_s"], 4 / (d["step_time_us"] * 1e-6),
                               delta=d["tokens_per_s"] * 1e-6)
        logits = [op for op in d["ops"] if op["name"] == "logits"][0]
        self.assertEqual(logits["m"], 4)
        with self.assertRaises(tilecast.RangeError):
            p.predict_model(MODEL, GPU, decode_context=-1)
        if not TILECAST_BIN:
            self.skipTest("TILECAST_BIN not set")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("".join("%s: %s\n" % kv for kv in MODEL.items()))
        try:
            code, out, err = run_cli("predict", "model", "--gpu", GPU, "--config", f.name,
                                     "--analytical", "--decode", "1024", "--json")
        finally:
            os.unlink(f.name)
        self.assertEqual(code, 0, err)
        self.assertAlmostEqual(json.loads(out)["step_time_us"], d["step_time_us"],
                               delta=d["step_time_us"] * 1e-6)

    def test_shipped_configs(self):
        d = os.path.join(SOURCE_ROOT, "predictor", "models")
        files = sorted(f for f in os.listdir(d) if f.endswith(".yaml"))
        self.assertTrue(files)
        for f in files:
            with self.subTest(config=f):
                r = analytical().predict_model(os.path.join(d, f), H100)
                self.assertGreater(r["step_time_us"], 0)

    def test_bad_configs(self):
        p = analytical()
        with self.assertRaises(tilecast.InvalidError) as cm:
            p.predict_model(dict(MODEL, hiden=4096), GPU)
        self.assertIn("hiden", str(cm.exception))
        with self.assertRaises(tilecast.TilecastError):
            p.predict_model(dict(MODEL, heads=3), GPU)  # 2048 not divisible by 3
        gelu = {k: v for k, v in MODEL.items() if k != "activation"}
        with self.assertRaises(tilecast.ParseError):  # as in a file: yes is true
            p.predict_model(dict(gelu, swiglu="maybe"), GPU)
        with self.assertRaises(tilecast.InvalidError):
            p.predict_model(dict(gelu, swiglu=[True]), GPU)
        with self.assertRaises(tilecast.ParseError):  # activation and swiglu set one field
            p.predict_model(dict(MODEL, swiglu=True), GPU)
        with self.assertRaises(tilecast.InvalidError):
            p.predict_model(42, GPU)
        with self.assertRaises(tilecast.TilecastError) as cm:
            p.predict_model("/nonexistent/model.yaml", GPU)
        self.assertIn("/nonexistent/model.yaml", str(cm.exception))

    def test_params(self):
        n = tilecast.model_params(MODEL)
        self.assertGreater(n, 1.0e9)
        self.assertLess(n, 2.0e9)

    def test_memory_and_host_bound_decode(self):
        # Llama-3-8B trained with Adam at t = 1: 16 bytes a parameter before
        # activations, more than an 80 GB GPU holds
        m = tilecast.model_memory("llama-3-8b", H100)
        n = tilecast.model_params("llama-3-8b")
        self.assertFalse(m["fits"])
        self.assertAlmostEqual(m["weights_bytes"] + m["grads_bytes"] + m["optimizer_bytes"],
                               16 * n, delta=1e6)
        cfg = dict(MODEL, tp=8)
        self.assertTrue(tilecast.model_memory(cfg, H100)["fits"])
        # the step reports the GPU's and the host's share, and CUDA graphs
        # remove the per-op dispatch
        eager = tilecast.predict_model(dict(cfg, mode="inference"), H100)
        graphs = tilecast.predict_model(dict(cfg, mode="inference", graphs=True), H100)
        self.assertEqual(eager["step_time_us"], max(eager["gpu_time_us"], eager["host_time_us"]))
        self.assertLess(graphs["host_time_us"], eager["host_time_us"])


class TestAdvise(unittest.TestCase):
    def test_candidates(self):
        cfg = dict(MODEL, hidden=4000, heads=40, vocab=50257)
        a = analytical().advise(cfg, GPU, params_tolerance=0.05, max_candidates=5)
        self.assertEqual(a["baseline"]["hidden"], 4000)
        self.assertGreater(a["n_evaluated"], 0)
        self.assertLessEqual(len(a["candidates"]), 5)
        self.assertTrue(a["candidates"])
        # the fewest changed knobs first, each group by speedup
        keys = [(c["changes"], -c["speedup"]) for c in a["candidates"]]
        self.assertEqual(keys, sorted(keys))
        for c in a["candidates"]:
            self.assertLessEqual(abs(c["params_delta"]), 0.05 + 1e-9)
            self.assertTrue(c["reason"])
            self.assertIn("hidden", c["config"])

    def test_bad_tolerance(self):
        with self.assertRaises(tilecast.InvalidError):
            analytical().advise(MODEL, GPU, params_tolerance=-1)

    def test_nodes(self):
        # 8 x 4 data-parallel GPUs: one GPU a node puts the gradient
        # all-reduce on the network, which a slow one makes the step's cost
        cfg = dict(MODEL, tp=8, dp=4)
        p = analytical()
        near = p.advise(cfg, GPU, max_candidates=1)
        far = p.advise(cfg, GPU, max_candidates=1, gpus_per_node=1, nic_gbps=1)
        self.assertGreater(far["baseline_step_us"], near["baseline_step_us"])
        self.assertEqual(near["baseline_step_us"],
                         p.predict_model(cfg, GPU)["step_time_us"])
        self.assertEqual(far["baseline_step_us"],
                         p.predict_model(cfg, GPU, gpus_per_node=1, nic_gbps=1)["step_time_us"])
        with self.assertRaises(tilecast.RangeError):
            p.advise(cfg, GPU, gpus_per_node=-1)


class TestDatabase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tilecast-py-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def imported_db(self):
        """A database imported by the command from the fixture CSV (four
        measured a100-sxm4-80gb fp16 NT rows of the vendored Vidur data)."""
        if not TILECAST_BIN:
            self.skipTest("TILECAST_BIN not set")
        path = os.path.join(self.tmp, "imported.db")
        if not os.path.exists(path):
            src = os.path.join(SOURCE_ROOT, "tests", "data", "python-gemm.csv")
            rc, _, err = run_cli("db", "import", "--format", "csv", "--into", path, src)
            self.assertEqual(rc, 0, err)
        return path

    def test_missing_file(self):
        # the library's own code, not one the binding guessed
        with self.assertRaises(tilecast.NotFoundError):
            tilecast.open_db(os.path.join(self.tmp, "missing.db"))

    def test_directory(self):
        with self.assertRaises(tilecast.InvalidError) as cm:
            tilecast.open_db(self.tmp)
        self.assertIn(self.tmp, str(cm.exception))

    def test_not_a_database(self):
        path = os.path.join(self.tmp, "junk.db")
        with open(path, "wb") as f:
            f.write(b"this is not sqlite\n" * 100)
        with self.assertRaises(tilecast.SchemaError) as cm:
            tilecast.open_db(path)
        self.assertIn("junk.db", str(cm.exception))
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"this is not sqlite\n" * 100)  # untouched

    def test_read_imported(self):
        with tilecast.open_db(self.imported_db()) as db:
            self.assertEqual(db.schema_version, 4)
            self.assertTrue(db.check())
            rows = db.gemm()
            self.assertEqual(len(rows), 4)
            first = [r for r in rows if (r["m"], r["n"], r["k"]) == (4096, 10240, 8192)]
            self.assertEqual(len(first), 1)
            self.assertEqual(first[0]["gpu"], GPU)
            self.assertEqual(first[0]["layout"], "NT")
            self.assertAlmostEqual(first[0]["time_us"], 2842.0, places=3)
            self.assertEqual(first[0]["kind"], "measurement")
            self.assertEqual(len(db.gemm(gpu=GPU, dtype="fp16", layout="NT")), 4)
            self.assertEqual(db.gemm(gpu=GPU, layout="NN"), [])
            self.assertEqual(db.gemm(gpu="h100-sxm5-80gb"), [])
            hit = db.lookup_gemm(GPU, 4096, 8192, 8192, dtype="fp16", layout="NT")
            self.assertAlmostEqual(hit["time_us"], 2367.0, places=3)
            self.assertIsNone(db.lookup_gemm(GPU, 3, 3, 3))
            self.assertIn("gemm", db.tables())
            n = db.query("SELECT COUNT(*) AS n FROM gemm")[0]["n"]
            self.assertEqual(n, 4)

    def test_query_is_read_only(self):
        path = self.imported_db()
        before = os.path.getsize(path)
        with tilecast.open_db(path) as db:
            with self.assertRaises(Exception):
                db.query("DELETE FROM gemm")
            self.assertEqual(db.query("SELECT COUNT(*) AS n FROM gemm")[0]["n"], 4)
        self.assertEqual(os.path.getsize(path), before)

    def test_measured_shape_is_labelled(self):
        p = tilecast.Predictor([self.imported_db()], prebuilt=False)
        r = p.predict_gemm(GPU, 4096, 10240, 8192, dtype="fp16", layout="NT")
        self.assertEqual(r["source"], "measured")
        self.assertEqual(r["kind"], "measurement")
        self.assertAlmostEqual(r["time_us"], 2842.0, places=3)
        other = p.predict_gemm(GPU, 3000, 3000, 3000, dtype="fp16", layout="NT")
        self.assertIn(other["source"], PREDICTION_SOURCES)
        self.assertEqual(other["kind"], "prediction")

    def test_op_under_a_host_timed_convention(self):
        # nn.Linear's longer host path counts under event timing, never in
        # kernel time
        db = self.imported_db()
        ev = tilecast.Predictor([db], prebuilt=False, timing="event")
        lin = ev.predict_gemm(GPU, 3000, 3000, 3000, dtype="fp16", layout="NT", op="linear")
        mm = ev.predict_gemm(GPU, 3000, 3000, 3000, dtype="fp16", layout="NT", op="mm")
        self.assertNotEqual(lin["source"], "analytical")
        self.assertAlmostEqual(lin["time_us"] - mm["time_us"], 23.0, places=6)
        k = tilecast.Predictor([db], prebuilt=False)
        self.assertEqual(
            k.predict_gemm(GPU, 3000, 3000, 3000, dtype="fp16", layout="NT", op="linear")["time_us"],
            k.predict_gemm(GPU, 3000, 3000, 3000, dtype="fp16", layout="NT")["time_us"])
        with self.assertRaises(tilecast.InvalidError):
            k.predict_gemm(GPU, 8, 8, 8, op="conv")
        # a misspelt method is refused, not taken as kernel time
        with self.assertRaises(tilecast.InvalidError):
            tilecast.Predictor([db], prebuilt=False, timing="evnet")
        tilecast.Predictor([db], prebuilt=False, timing="cupti-median")

    def test_closed(self):
        db = tilecast.open_db(self.imported_db())
        db.close()
        db.close()
        with self.assertRaises(tilecast.InvalidError):
            db.gemm()


class TestInstall(unittest.TestCase):
    def test_pip_install_offline(self):
        """`pip install ./python` works from a checkout with no network."""
        try:
            import setuptools  # noqa: F401
            subprocess.run([sys.executable, "-m", "pip", "--version"], check=True,
                           capture_output=True)
        except (ImportError, subprocess.CalledProcessError):
            self.skipTest("pip or setuptools not installed")
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "src")
            shutil.copytree(os.path.join(SOURCE_ROOT, "python"), src,
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            target = os.path.join(tmp, "site")
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                                "--no-build-isolation", "--no-index", "--no-deps",
                                "--target", target, src], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            code = ("import tilecast, sys; assert tilecast.__file__.startswith(sys.argv[1]); "
                    "print(tilecast.version())")
            env = dict(os.environ, PYTHONPATH=target)
            p = subprocess.run([sys.executable, "-c", code, target], capture_output=True,
                               text=True, env=env, cwd=tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), tilecast.version())


if __name__ == "__main__":
    unittest.main()
