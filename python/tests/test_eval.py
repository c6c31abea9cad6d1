"""Calibrating a database, eval statistics and the measured-layer comparison
through the binding: figures known by hand, and the same figures as the
tilecast command prints where it is at hand ($TILECAST_BIN)."""

import csv
import math
import os
import shutil
import subprocess
import tempfile
import unittest

import tilecast

SOURCE_ROOT = os.environ.get("TILECAST_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TILECAST_BIN = os.environ.get("TILECAST_BIN")
GPU = "a100-sxm4-80gb"


def run_cli(*args):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([TILECAST_BIN] + list(args), capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


class TestEvalStats(unittest.TestCase):
    def test_figures_by_hand(self):
        # signed errors -10, +10, +20, 0 %
        s = tilecast.eval_stats([100, 100, 100, 100], [90, 110, 120, 100],
                                flops=[1e9, 1.05e9, 3e9, 4e9])
        self.assertAlmostEqual(s["mape_pct"], 10.0)
        self.assertAlmostEqual(s["median_ape_pct"], 10.0)
        self.assertAlmostEqual(s["p90_ape_pct"], 17.0)  # 10 + 0.7 x (20 - 10)
        self.assertAlmostEqual(s["bias_pct"], 5.0)      # between 0 and +10
        # measured TFLOP/s rank 1, 2, 3, 4; predicted ones (1/90, 1.05/110, 3/120,
        # 4/100) 2, 1, 3, 4: rho = 1 - 6 x 2 / (4 x 15)
        self.assertAlmostEqual(s["spearman_tflops"], 0.8)

    def test_no_rows_is_nan(self):
        s = tilecast.eval_stats([], [])
        self.assertTrue(all(math.isnan(v) for v in s.values()))

    def test_bad_input(self):
        with self.assertRaises(tilecast.InvalidError):
            tilecast.eval_stats([1, 2], [1])
        with self.assertRaises(tilecast.InvalidError):
            tilecast.eval_stats([0], [1])

    def test_spearman(self):
        self.assertAlmostEqual(tilecast.spearman([1, 2, 3, 4], [10, 20, 30, 45]), 1.0)
        self.assertAlmostEqual(tilecast.spearman([1, 2, 3, 4], [4, 3, 2, 1]), -1.0)
        # ties share their mean rank: ranks (1.5, 1.5, 3) against (1, 2, 3)
        self.assertAlmostEqual(tilecast.spearman([5, 5, 7], [1, 2, 3]), math.sqrt(3) / 2)
        self.assertTrue(math.isnan(tilecast.spearman([1, 2], [1, 2])))
        self.assertTrue(math.isnan(tilecast.spearman([1, 1, 1], [1, 2, 3])))

    def test_timing_host_cost(self):
        self.assertEqual(tilecast.timing_host_cost("event-fastest5-mean"),
                         {"typical_us": 28.0, "floor_us": 28.0, "lo_us": 18.0, "hi_us": 38.0,
                          "linear_us": 23.0})
        # nn.Linear's longer host path: wall clocks too, never kernel time
        self.assertEqual(tilecast.timing_host_cost("wall-avg-incl-launch")["linear_us"], 23.0)
        self.assertEqual(tilecast.timing_host_cost("event")["typical_us"], 28.0)
        self.assertEqual(tilecast.timing_host_cost("wall-avg-incl-launch")["floor_us"], 0.0)
        self.assertEqual(set(tilecast.timing_host_cost("profiler-median").values()), {0.0})
        self.assertEqual(set(tilecast.timing_host_cost(None).values()), {0.0})


class TestCalibrateDb(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.db = os.path.join(self.dir, "a100.db")
        shutil.copy(os.path.join(SOURCE_ROOT, "db", "prebuilt", GPU + ".db"), self.db)
        os.chmod(self.db, 0o644)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def calibrations(self):
        with tilecast.open_db(self.db) as d:
            return d.query("SELECT gpu_id, dtype, n_rows FROM calibration")

    def test_dry_run_then_store(self):
        before = self.calibrations()
        fits = tilecast.calibrate_db(self.db, store=False)
        self.assertTrue(fits)
        self.assertEqual(self.calibrations(), before)
        fit = fits[0]
        self.assertEqual(fit["gpu_id"], GPU)
        self.assertIn(fit["dtype"], tilecast.dtype_names())
        self.assertGreater(fit["rows"], 100)
        self.assertFalse(fit["stored"])
        self.assertGreater(fit["c_compute"], 0.3)
        self.assertLess(fit["interval_lo_pct"], 0)
        self.assertGreater(fit["interval_hi_pct"], 0)
        self.assertLessEqual(fit["fit_p50_pct"], fit["fit_p90_pct"])

        stored = tilecast.calibrate_db(self.db, gpu=GPU, dtype=fit["dtype"])
        self.assertEqual(len(stored), 1)
        self.assertTrue(stored[0]["stored"])
        self.assertEqual({k: v for k, v in stored[0].items() if k != "stored"},
                         {k: v for k, v in fit.items() if k != "stored"})
        self.assertIn((GPU, fit["dtype"], fit["rows"]),
                      [(r["gpu_id"], r["dtype"], r["n_rows"]) for r in self.calibrations()])

    def test_same_figures_as_the_command(self):
        if not TILECAST_BIN:
            self.skipTest("TILECAST_BIN not set")
        rc, out, err = run_cli("db", "calibrate", self.db, "--dry-run", "--csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(out.splitlines()))
        fits = tilecast.calibrate_db(self.db, store=False)
        self.assertEqual(len(rows), len(fits))
        for row, fit in zip(rows, fits):
            self.assertEqual(row["gpu"], fit["gpu_id"])
            self.assertEqual(int(row["rows"]), fit["rows"])
            self.assertEqual(row["c_compute"], "%.4f" % fit["c_compute"])
            self.assertEqual(row["heldout_mape_pct"], "%.2f" % fit["heldout_mape_pct"])

    def test_nothing_to_fit_and_errors(self):
        self.assertEqual(tilecast.calibrate_db(self.db, gpu="no-such-gpu", store=False), [])
        with self.assertRaises(tilecast.TilecastError):
            tilecast.calibrate_db(os.path.join(self.dir, "missing.db"), store=False)


class TestCompareLayers(unittest.TestCase):
    OPS = (("attn_pre_proj", 12288, 4096), ("attn_post_proj", 4096, 4096),
           ("mlp_up_proj", 22016, 4096), ("mlp_down_proj", 4096, 11008))

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, rows):
        path = os.path.join(self.dir, "layers.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["gpu", "dtype", "m", "n", "k", "layout", "time_us", "model", "tp",
                        "vidur_op"])
            w.writerows(rows)
        return path

    def test_one_layer_by_hand(self):
        p = tilecast.predictor(analytical=True)
        tokens = 2048
        rows, pred_sum = [], 0.0
        for op, n, k in self.OPS:
            pred_sum += p.predict_gemm(GPU, tokens, n, k, layout="NT")["time_us"]
            rows.append([GPU, "fp16", tokens, n, k, "NT", "100", "llama", 1, op])
        rows.append([GPU, "fp16", tokens, 1, 1, "NT", "5", "llama", 1, "attn_rope"])  # not a GEMM
        groups = tilecast.compare_layers(self.write(rows), predictor=p)
        self.assertEqual([(g["gpu_id"], g["model"]) for g in groups],
                         [(GPU, "llama"), ("all", "all")])
        expected = 100 * abs(pred_sum - 400) / 400
        for g in groups:
            self.assertEqual(g["layers"], 1)
            self.assertAlmostEqual(g["mape_pct"], expected)
            self.assertAlmostEqual(g["median_ape_pct"], expected)
            self.assertEqual(g["source"], "analytical")

    def test_incomplete_and_bad_rows(self):
        p = tilecast.predictor(analytical=True)
        incomplete = self.write([[GPU, "fp16", 64, 4096, 4096, "NT", "30", "m", 1,
                                  "attn_pre_proj"]])
        with self.assertRaisesRegex(tilecast.NotFoundError, "no complete layer"):
            tilecast.compare_layers(incomplete, predictor=p)
        bad = self.write([[GPU, "fp16", "x", 4096, 4096, "NT", "30", "m", 1, "attn_pre_proj"]])
        with self.assertRaisesRegex(tilecast.ParseError, r"layers\.csv:2: column 'm'"):
            tilecast.compare_layers(bad, predictor=p)

    def test_same_figures_as_the_command(self):
        vidur = os.path.join(os.environ.get("TILECAST_MEASURED_DATA", ""), "vidur_gemm.csv")
        if not TILECAST_BIN or not os.path.exists(vidur):
            self.skipTest("TILECAST_BIN or the measured data not at hand")
        rc, out, err = run_cli("predict", "layer", "--measured", vidur, "--analytical", "--csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(out.splitlines()))
        groups = tilecast.compare_layers(vidur, analytical=True)
        self.assertEqual([(r["gpu"], r["model"], int(r["layers"]), r["mape_pct"])
                          for r in rows],
                         [(g["gpu_id"], g["model"], g["layers"], "%.2f" % g["mape_pct"])
                          for g in groups])


if __name__ == "__main__":
    unittest.main()
