/* A collection run: shard selection, resume, measuring, and batched commits
 * into the database with the run's provenance. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "hash.h"
#include "tc-internal.h"

void tc_collect_defaults(struct tc_collect_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->shard_count = 1;
    tc_harness_defaults(&o->harness);
    o->commit_rows = 32;
    o->commit_s = 5.0;
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3" */
static void slug(const char *name, char *out, size_t len)
{
    size_t o = 0;
    bool dash = false;

    for (const char *p = name; *p && o + 1 < len; p++) {
        if (isalnum((unsigned char)*p)) {
            if (dash && o)
                out[o++] = '-';
            if (o + 1 < len)
                out[o++] = (char)tolower((unsigned char)*p);
            dash = false;
        } else {
            dash = true;
        }
    }
    out[o] = '\0';
    if (!o)
        tc_strlcpy(out, "unknown-device", len);
}

/* Output and compute types the backends use for each input type. */
static void row_types(enum tc_dtype in, struct tc_gemm_row *row)
{
    row->dtype = in;
    row->dtype_c = in;
    row->compute = TC_DTYPE_FP32;
    switch (in) {
    case TC_DTYPE_FP64:
        row->compute = TC_DTYPE_FP64;
        break;
    case TC_DTYPE_TF32:
        row->dtype_c = TC_DTYPE_FP32;
        row->compute = TC_DTYPE_TF32;
        break;
    case TC_DTYPE_FP8:
        row->dtype_c = TC_DTYPE_BF16;
        break;
    case TC_DTYPE_INT8:
        row->compute = TC_DTYPE_INT8;
        break;
    default:
        break;
    }
}

/* Creates the database under a temporary name and links it into place
 * once complete, so that a kill during creation never leaves a
 * half-initialised file at `path` (which every later open would refuse).
 * Closing the fresh file first also checkpoints its write-ahead log, so
 * its header is final before anything else is written. */
static int create_atomically(const char *path)
{
    char tmp[4096];
    struct tc_db *db;
    int err = TC_OK;

    /* what a run killed during the creation left (SIGKILL cannot be
     * caught): nothing else removes it */
    tc_remove_stale_temps(path, "creating");
    if (access(path, F_OK) == 0)
        return TC_OK;
    if ((err = tc_temp_path(path, "creating", tmp, sizeof(tmp))) < 0)
        return err;
    /* one of this PID's, left by an earlier process that had it */
    tc_remove_db_files(tmp);
    if (tc_db_open(tmp, TC_DB_CREATE, &db) < 0) {
        err = tc_error_prefix(TC_ERR_DB, "creating %s", path);
        tc_remove_db_files(tmp);
        return err;
    }
    tc_db_close(db);
    /* Closing checkpoints the log into the file and removes the log; on a
     * disk that filled up meanwhile the checkpoint fails, which closing
     * cannot report, and the file alone (all that is linked into place) is
     * short. Only a file whose log is gone goes into place. */
    {
        char wal[4096 + 8];
        struct stat sb;

        snprintf(wal, sizeof(wal), "%s-wal", tmp);
        if (stat(wal, &sb) == 0 && sb.st_size > 0) {
            err = tc_error(TC_ERR_IO,
                           "creating %s: the new file could not be written "
                           "completely (is the disk full?)",
                           path);
            tc_remove_db_files(tmp);
            return err;
        }
    }
    /* link() never replaces a file another shard created meanwhile */
    if (link(tmp, path) != 0 && errno != EEXIST && rename(tmp, path) != 0)
        err = tc_error(TC_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    tc_remove_db_files(tmp);
    return err;
}

/* An ok row's message says when its samples were groups of launches: reps
 * counts the samples, time_us is per launch. */
static void note_group(const struct tc_measurement *m, char *msg, size_t len)
{
    if (m->group > 1)
        snprintf(msg, len, "timed in groups of %d back-to-back launches (time per launch)",
                 m->group);
}

/* An ok attention row's message: what ran it (the backend's record) and
 * whether its samples were groups of launches. */
static void attn_message(const struct tc_backend_ops *ops, struct tc_backend *b,
                         const struct tc_measurement *m, char *msg, size_t len)
{
    char algo[sizeof(((struct tc_attention_row *)0)->message)] = "";
    char group[96] = "";

    if (ops->attn_algo)
        ops->attn_algo(b, algo, sizeof(algo));
    note_group(m, group, sizeof(group));
    snprintf(msg, len, "%s%s%s", algo, *algo && *group ? "; " : "", group);
}

static int store(struct tc_db *db, const struct tc_backend_ops *ops, struct tc_backend *b,
                 int64_t run_id, const struct tc_shape *s, const struct tc_measurement *m)
{
    if (s->kind == TC_SHAPE_ATTENTION) {
        struct tc_attention_row row = {0};

        row.run_id = run_id;
        row.impl = s->impl;
        row.dtype = s->dtype;
        row.batch = s->batch;
        row.heads = s->heads;
        row.kv_heads = s->kv_heads;
        row.seq_q = s->seq_q;
        row.seq_kv = s->seq_kv;
        row.head_dim = s->head_dim;
        row.causal = s->causal;
        row.backward = s->backward;
        row.status = m->outcome.status;
        tc_strlcpy(row.message, m->outcome.message, sizeof(row.message));
        if (m->outcome.status == TC_STATUS_OK) {
            row.time_us = m->total.median_us;
            row.min_us = m->total.min_us;
            row.spread_pct = m->total.rel_ci * 100.0;
            row.reps = m->total.n;
            attn_message(ops, b, m, row.message, sizeof(row.message));
            if (m->has_parts) {
                row.scores_us = m->parts[0].median_us;
                row.softmax_us = m->parts[1].median_us;
                row.values_us = m->parts[2].median_us;
            }
        }
        return tc_db_insert_attention(db, &row);
    } else {
        struct tc_gemm_row row = {0};

        row.run_id = run_id;
        row_types(s->dtype, &row);
        row.layout = s->layout;
        row.m = s->m;
        row.n = s->n;
        row.k = s->k;
        row.batch = s->batch;
        row.status = m->outcome.status;
        tc_strlcpy(row.message, m->outcome.message, sizeof(row.message));
        if (m->outcome.status == TC_STATUS_OK) {
            row.time_us = m->total.median_us;
            row.min_us = m->total.min_us;
            row.spread_pct = m->total.rel_ci * 100.0;
            row.reps = m->total.n;
            note_group(m, row.message, sizeof(row.message));
            if (ops->algo)
                ops->algo(b, &row);
        }
        return tc_db_insert_gemm(db, &row);
    }
}

static int already_stored(struct tc_db *db, int64_t run_id, const struct tc_shape *s, bool *found)
{
    if (s->kind == TC_SHAPE_ATTENTION) {
        struct tc_attention_row key = {0};

        key.impl = s->impl;
        key.dtype = s->dtype;
        key.batch = s->batch;
        key.heads = s->heads;
        key.kv_heads = s->kv_heads;
        key.seq_q = s->seq_q;
        key.seq_kv = s->seq_kv;
        key.head_dim = s->head_dim;
        key.causal = s->causal;
        key.backward = s->backward;
        return tc_db_has_attention(db, run_id, &key, found);
    }
    return tc_db_has_gemm(db, run_id, s->dtype, s->layout, s->m, s->n, s->k, s->batch, found);
}

/* Rows are stored under the spec given (--gpu) or as the device itself:
 * a spec of another vendor or family would file them as that GPU's (a CPU's
 * timings as an A100's), and a device of no family has no arch to store. */
static int check_device(const struct tc_collect_opts *o, const struct tc_backend_info *info)
{
    if (!o->gpu) {
        if (!info->arch_known)
            return tc_error(
                TC_ERR_UNSUPPORTED,
                "%s is of no architecture family tilecast models: its rows could not be "
                "predicted or calibrated (give --gpu with the spec of what it is)",
                info->device_name);
        return TC_OK;
    }
    if (!info->arch_known)
        return TC_OK;
    if (info->vendor == TC_VENDOR_CPU)
        return tc_error(TC_ERR_INVALID,
                        "the %s backend measures the host CPU (%s), not %s: leave out --gpu",
                        info->name, info->device_name, o->gpu->id);
    if (info->vendor != o->gpu->vendor || info->arch != o->gpu->arch)
        return tc_error(TC_ERR_INVALID,
                        "the device is %s (%s), but --gpu %s is a %s GPU: its rows would be "
                        "stored as that GPU's",
                        info->device_name, tc_arch_name(info->arch), o->gpu->id,
                        tc_arch_name(o->gpu->arch));
    return TC_OK;
}

int tc_collect_run(const struct tc_collect_opts *o, const struct tc_sweep *sweep,
                   struct tc_collect_summary *sum)
{
    const struct tc_shape *shapes = tc_sweep_shapes(sweep);
    struct tc_backend_info info;
    struct tc_backend *b = NULL;
    struct tc_db *db = NULL;
    struct tc_run_info ri = {0};
    struct tc_harness_opts harness = o->harness;
    struct tc_gpu snapshot;
    size_t *idx = NULL, n_sel = 0;
    char gpu_id[TC_ID_MAX], host[256] = "", shard[32], cfg[1024], cfg_hash[40];
    char started[32], ended[32], clocks[512], clocks_json[1200], timing[128];
    char fault[sizeof(((struct tc_outcome *)0)->message)] = "";
    bool in_tx = false, backward = false;
    int pending = 0, err;
    double t_start = tc_now_s(), t_commit;

    memset(sum, 0, sizeof(*sum));
    if (!o->backend || !o->db_path)
        return tc_error(TC_ERR_INVALID, "tc_collect_run: no backend or database");
    sum->total = tc_sweep_count(sweep);
    if (!(idx = malloc((sum->total ? sum->total : 1) * sizeof(*idx))))
        return tc_error(TC_ERR_NOMEM, "out of memory");
    if ((err = tc_collect_select(sweep, o->costs, o->shard_index, o->shard_count, idx, &n_sel)) < 0)
        goto out;
    sum->in_shard = n_sel;
    if ((err = o->backend->open(o->device, &b, &info)) < 0)
        goto out;
    if ((err = check_device(o, &info)) < 0)
        goto out;
    if (o->gpu_id && *o->gpu_id)
        tc_strlcpy(gpu_id, o->gpu_id, sizeof(gpu_id));
    else
        slug(info.device_name, gpu_id, sizeof(gpu_id));
    gethostname(host, sizeof(host) - 1);
    snprintf(shard, sizeof(shard), "%d/%d", o->shard_index, o->shard_count);
    /* The run configuration: what must match for rows to be comparable and
     * for a re-run to continue this run. The shard is left out so the
     * shards of one sweep share it. */
    snprintf(cfg, sizeof(cfg),
             "v2|%s|%s|%s|%s|rel_ci=%.6g|max_ms=%.6g|reps=%d-%d|warmup=%d|warmup_ms=%.6g",
             info.name, gpu_id, info.device_name, tc_sweep_hash(sweep), o->harness.rel_ci,
             o->harness.max_time_ms, o->harness.min_reps, o->harness.max_reps,
             o->harness.warmup_reps, o->harness.warmup_ms);
    /* The timing method as stored: the backend's (timer, statistic, cache
     * flush) and the harness's warm-up, which decides whether short
     * kernels were timed at full clocks. */
    if (o->harness.warmup_ms > 0)
        snprintf(timing, sizeof(timing), "%s-warmup%.6gms", info.timing, o->harness.warmup_ms);
    else
        snprintf(timing, sizeof(timing), "%s-warmup%dreps", info.timing, o->harness.warmup_reps);
    /* and which kernels were timed in groups of launches */
    harness.timer_resolution_us = info.timer_resolution_us;
    harness.stop = o->stop;
    if (info.timer_resolution_us > 0)
        snprintf(timing + strlen(timing), sizeof(timing) - strlen(timing), "-group<%.3gus",
                 TC_GROUP_BELOW_RES * info.timer_resolution_us);
    snprintf(cfg_hash, sizeof(cfg_hash), "fnv1a64:%016" PRIx64,
             tc_fnv1a64(cfg, strlen(cfg), TC_FNV1A64_SEED));

    if ((err = create_atomically(o->db_path)) < 0)
        goto out;
    /* its own code and message, which names the file: a file that is not
     * a tilecast database is the user's input (exit 2), not a runtime error */
    if ((err = tc_db_open(o->db_path, TC_DB_READWRITE, &db)) < 0)
        goto out;
    if (o->gpu) {
        snapshot = *o->gpu;
    } else {
        memset(&snapshot, 0, sizeof(snapshot));
        tc_strlcpy(snapshot.name, info.device_name, sizeof(snapshot.name));
        snapshot.vendor = info.vendor;
        snapshot.arch = info.arch;
    }
    tc_strlcpy(snapshot.id, gpu_id, sizeof(snapshot.id));
    o->backend->clocks(b, clocks, sizeof(clocks));
    /* The lookup and the creation in one write transaction: BEGIN
     * IMMEDIATE takes the write lock first, so of collectors started
     * together on a file without the run, the first creates it and the
     * others wait and then find it (one run per configuration). A UNIQUE
     * index on (gpu_id, config_hash) would need every file to hold no
     * duplicate already, which files written before this are not. */
    if ((err = tc_db_begin(db)) < 0)
        goto out;
    in_tx = true;
    err = tc_db_find_run(db, gpu_id, cfg_hash, &sum->run_id);
    if (err == TC_OK) {
        sum->resumed = true;
    } else if (err == TC_ERR_NOT_FOUND) {
        if ((err = tc_db_put_gpu(db, &snapshot)) < 0)
            goto out;
        snprintf(clocks_json, sizeof(clocks_json), "{\"before\":%s}", clocks);
        tc_utc_now(started, sizeof(started));
        ri.gpu_id = gpu_id;
        ri.kind = "collected";
        ri.host = host;
        ri.device_name = info.device_name;
        ri.device_uuid = info.device_uuid;
        ri.driver_version = info.driver_version;
        ri.runtime_version = info.runtime_version;
        ri.blas_version = info.blas_version;
        ri.backend = info.name;
        ri.sweep_name = tc_sweep_name(sweep);
        ri.sweep_hash = tc_sweep_hash(sweep);
        ri.config_hash = cfg_hash;
        ri.shard = shard;
        ri.timing = timing;
        ri.clocks_json = clocks_json;
        ri.tilecast_version = tc_version();
        ri.started_at = started;
        if ((err = tc_db_add_run(db, &ri, &sum->run_id)) < 0)
            goto out;
    } else {
        goto out;
    }
    if ((err = tc_db_commit(db)) < 0)
        goto out;
    in_tx = false;

    t_commit = tc_now_s();
    /* Shapes are taken from the front of the shard's list, or from its back
     * once another collector of the same run and shard is seen storing a
     * shape this one measured: the two then work towards each other
     * instead of measuring every shape in step. */
    for (size_t lo = 0, hi = n_sel; lo < hi;) {
        const struct tc_shape *s = &shapes[idx[backward ? --hi : lo++]];
        struct tc_measurement m;
        bool found = false;
        double t0;

        if (o->stop && *o->stop) {
            sum->interrupted = true;
            break;
        }
        if ((err = already_stored(db, sum->run_id, s, &found)) < 0)
            goto out;
        if (found) {
            sum->skipped++;
            if (o->progress)
                o->progress(o->progress_ud, sum, s, NULL);
            continue;
        }
        t0 = tc_now_s();
        if ((err = tc_harness_measure(o->backend, b, &harness, s, &m)) < 0) {
            if (err != TC_ERR_DEVICE)
                goto out;
            /* A device fault (CUDA's sticky errors: an illegal address, a
             * launch failure) leaves the context unusable, so the run
             * stops; but a re-run, in a fresh context, would measure the
             * same shape first and fault again. The shape is stored as an
             * error row, which resuming skips. */
            tc_strlcpy(fault, tc_last_error(), sizeof(fault));
            m.outcome.status = TC_STATUS_ERROR;
            snprintf(m.outcome.message, sizeof(m.outcome.message), "device fault: %s", fault);
        }
        /* a second SIGINT: the unfinished shape is dropped (a re-run
         * measures it), the rows before it are committed below */
        if (m.abandoned) {
            sum->interrupted = true;
            break;
        }
        sum->harness_s += tc_now_s() - t0;
        sum->flush_s += m.flush_ms * 1e-3;
        t0 = tc_now_s();
        if (!in_tx) {
            if ((err = tc_db_begin(db)) < 0)
                goto out;
            in_tx = true;
        }
        /* Under the write lock now: a collector of the same run and shard
         * may have committed this shape while it was measured here. Its row
         * stays (the row's uniqueness keeps one anyway) and this one counts
         * as already stored. A fault's error row is kept for the stop below. */
        if (!*fault && (err = already_stored(db, sum->run_id, s, &found)) < 0)
            goto out;
        if (found) {
            backward = true;
            sum->skipped++;
            sum->insert_s += tc_now_s() - t0;
            if (o->progress)
                o->progress(o->progress_ud, sum, s, NULL);
            continue;
        }
        sum->measured++;
        if (m.outcome.status == TC_STATUS_OK) {
            sum->ok++;
            sum->kernel_s += m.total.sum_us * 1e-6;
        } else if (m.outcome.status == TC_STATUS_UNSUPPORTED) {
            sum->unsupported++;
        } else {
            sum->failed++;
        }
        if ((err = store(db, o->backend, b, sum->run_id, s, &m)) < 0)
            goto out;
        /* Small batches: a kill loses at most the open one, and a reader
         * (or the resumed run) sees progress soon. */
        if (++pending >= o->commit_rows || tc_now_s() - t_commit >= o->commit_s || *fault) {
            if ((err = tc_db_commit(db)) < 0)
                goto out;
            in_tx = false;
            pending = 0;
            t_commit = tc_now_s();
        }
        sum->insert_s += tc_now_s() - t0;
        if (o->progress)
            o->progress(o->progress_ud, sum, s, &m);
        if (*fault) {
            char shape[160];

            tc_shape_format(s, shape, sizeof(shape));
            err = tc_error(TC_ERR_DEVICE,
                           "%s; stopped at %s, stored as an error row: re-run the same "
                           "command to continue after it",
                           fault, shape);
            goto out;
        }
    }
    if (in_tx) {
        if ((err = tc_db_commit(db)) < 0)
            goto out;
        in_tx = false;
    }
    if (!sum->interrupted) {
        tc_utc_now(ended, sizeof(ended));
        if ((err = tc_db_end_run(db, sum->run_id, ended)) < 0)
            goto out;
    }
    err = TC_OK;
out:
    if (in_tx)
        tc_db_rollback(db);
    sum->wall_s = tc_now_s() - t_start;
    tc_db_close(db);
    if (b)
        o->backend->close(b);
    free(idx);
    return err;
}
