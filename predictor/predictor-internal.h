/* What the files of the predictor object share: its state, the databases it
 * reads and the cached answer per (GPU, dtype). predictor.c predicts,
 * predictor-sources.c reads the databases and chooses a source,
 * predictor-transfer.c chooses the source of a transfer. Not installed. */
#ifndef TC_PREDICTOR_INTERNAL_H
#define TC_PREDICTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calibrate.h"
#include "tc-internal.h"

#define NOTE_MAX 512

struct pred_db {
    char *path;
    struct tc_db *db;
    bool prebuilt;
    bool failed;  /* a prebuilt file that could not be opened */
    bool scanned; /* runs and (gpu, dtype) pairs read */
    /* run id -> timing class, from the runs' provenance */
    int64_t *run_ids;
    enum tc_timing_class *run_timing;
    size_t n_runs;
    /* (gpu, dtype) pairs with ok GEMM rows */
    struct {
        char gpu_id[TC_ID_MAX];
        enum tc_dtype dtype;
        int64_t rows;
    } * pairs;
    size_t n_pairs;
};

/* How queries of one (GPU, dtype) are answered, resolved once. */
struct entry {
    char gpu_id[TC_ID_MAX];
    enum tc_dtype dtype;
    bool own_built; /* own calibration looked for */
    int build_err;  /* why that failed (a damaged database), 0 if not */
    char build_msg[NOTE_MAX];
    struct tc_calib *calib; /* fitted on this GPU and dtype's rows, or NULL */
    enum tc_arch arch;
    bool resolved;
    enum tc_source source;       /* CALIBRATED, TRANSFERRED or ANALYTICAL */
    const struct entry *from;    /* transferred: the source */
    struct tc_calib_params xfer; /* transferred: moved parameters */
    double nb_weight;            /* transferred: neighbour correction weight */
    bool same_family;
    char note[NOTE_MAX];
    /* calibrated: the parameters for a timing class none of the rows has,
     * from another GPU's or dtype's rows timed that way (other_from) where
     * there are some, else from these rows */
    const struct entry *other_from;
    struct tc_calib_params other_timing;
    double other_nb_weight;
    bool other_timing_ready;
    char other_timing_note[NOTE_MAX];
    /* the GPUs of its family below it on every resource with measured rows
     * of this dtype, whose measurements bound its kernel time from above */
    const struct entry *below[8];
    size_t n_below;
    bool below_ready;
};

/* The attention rows of one (GPU, impl, dtype, direction). */
struct attn_set {
    char gpu_id[TC_ID_MAX];
    enum tc_attn_impl impl;
    enum tc_dtype dtype;
    bool backward;
    struct tc_attn_rows set;
};

struct tc_predictor {
    const struct tc_specs *specs;
    bool analytical_only;
    bool use_prebuilt;
    bool allow_transfer;
    enum tc_timing_class timing;
    bool bound_pass;      /* answering for a transfer's bound: kernel-time rows only */
    struct pred_db **dbs; /* added by the user */
    size_t n_dbs;
    struct pred_db **prebuilt; /* opened lazily, one per GPU file */
    size_t n_prebuilt;
    bool prebuilt_scanned; /* every prebuilt file opened (transfer search) */
    struct entry **entries;
    size_t n_entries;
    struct entry *last;     /* the entry of the previous query */
    struct attn_set **attn; /* measured attention rows, read on first use */
    size_t n_attn;
    const char *note;
    char note_buf[NOTE_MAX];
};

/* predictor-sources.c */
/* Opens a database read-only (prebuilt: a shipped file); its runs and row
 * counts are read when first needed. NULL with *err set on failure.
 * pred_db_free accepts NULL. */
struct pred_db *pred_db_open(const char *path, bool prebuilt, int *err);
void pred_db_free(struct pred_db *d);
/* Reads d's runs and (GPU, dtype) pairs. */
int pred_db_scan(struct pred_db *d);
/* Appends d to a list of databases. */
int pred_push_db(struct pred_db ***list, size_t *n, struct pred_db *d);
/* Opens every prebuilt file (the transfer search looks at all GPUs). */
void pred_prebuilt_scan_all(struct tc_predictor *p);
/* The databases whose rows describe gpu_id: the user's, else the GPU's
 * prebuilt file. At most max; returns the count. */
size_t pred_dbs_for(struct tc_predictor *p, const char *gpu_id, struct pred_db **out, size_t max);
/* The GPU from the specs, else a database's spec snapshot (into buf). */
const struct tc_gpu *pred_gpu_of(struct tc_predictor *p, const char *gpu_id,
                                 struct pred_db *const *dbs, size_t n_dbs, struct tc_gpu *buf);
/* The entry of (gpu, dtype) with its own calibration built; NULL only when
 * out of memory (a database that failed to read sets e->build_err). */
struct entry *pred_own_entry(struct tc_predictor *p, const char *gpu_id, enum tc_dtype dtype);
/* The entry of (gpu, dtype) with its source chosen: measured rows of its
 * own, a transfer, or the analytical model. */
int pred_resolve(struct tc_predictor *p, const struct tc_gpu *gpu, enum tc_dtype dtype,
                 struct entry **out);

/* predictor-transfer.c */
/* The entry whose calibration a transfer onto (gpu, dtype) starts from, or
 * NULL when no database has one; timed: only one with rows timed as the
 * predictor is asked. */
struct entry *pred_transfer_source(struct tc_predictor *p, const struct tc_gpu *gpu,
                                   enum tc_dtype dtype, bool timed);
/* Whether transferred parameters leave the analytical model as it is. */
bool pred_transfers_nothing(const struct tc_calib_params *x);

#endif
