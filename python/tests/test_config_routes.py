"""A model-config key and value mean the same through every route: a YAML
file (tc_model_config_load), a Python dict (model_config) and the command's
shape flags (tilecast predict layer), all of which go through the library's
tc_model_config_set. Each case gives the same config, or the same error (the
same class and the same message after the route's own prefix)."""

import json
import os
import subprocess
import tempfile
import unittest

import tilecast
from tilecast import _lib, errors

GPU = "a100-sxm4-80gb"
TILECAST_BIN = os.environ.get("TILECAST_BIN")

# What predict layer starts from; the YAML file and the dict start from it too.
BASE = (("hidden", "4096"), ("heads", "32"), ("seq", "128"), ("vocab", "0"),
        ("mode", "inference"))

# The flag of a key (its value follows it), or of one key: value (a switch).
FLAGS = {"hidden": "--hidden", "heads": "--heads", "kv_heads": "--kv-heads",
         "head_dim": "--head-dim", "ffn": "--ffn", "seq": "--seq",
         "micro_batch": "--micro-batch", "tp": "--tp", "layers": "--layers",
         "vocab": "--vocab", "dtype": "--dtype", "attention": "--attention"}
SWITCHES = {("activation", "swiglu"): "--swiglu", ("activation", "gelu"): "--gelu",
            ("norm", "rmsnorm"): "--rmsnorm", ("mode", "training"): "--train",
            ("mode", "inference"): "--inference", ("causal", "false"): "--no-causal"}

# (key, value, the field and value it sets) or (key, value, error class)
CASES = [
    ("hidden", "2048", "hidden", 2048),
    ("hidden_size", "2048", "hidden", 2048),
    ("num_attention_heads", "16", "heads", 16),
    ("kv_heads", "8", "kv_heads", 8),
    ("num_key_value_heads", "8", "kv_heads", 8),
    ("kv_heads", "0", "kv_heads", 32),  # 0 means heads, as a flag too now
    ("head_dim", "0", "head_dim", 128),
    ("ffn", "11008", "ffn", 11008),
    ("intermediate_size", "11008", "ffn", 11008),
    ("ffn", "0", "ffn", 16384),
    ("vocab", "0", "vocab", 0),
    ("vocab_size", "32000", "vocab", 32000),
    ("layers", "2", "layers", 2),
    ("num_hidden_layers", "2", "layers", 2),
    ("micro_batch", "4", "micro_batch", 4),
    ("tp", "2", "tp", 2),
    ("seq", "256", "seq", 256),
    ("activation", "swiglu", "swiglu", True),
    ("activation", "GELU", "swiglu", False),
    ("swiglu", "true", "swiglu", True),
    ("swiglu", "yes", "swiglu", True),
    ("activation", "gelu_new", "gelu_new", True),
    ("gelu_new", "on", "gelu_new", True),
    ("norm", "rmsnorm", "rmsnorm", True),
    ("rmsnorm", "on", "rmsnorm", True),
    ("mode", "training", "training", True),
    ("mode", "prefill", "training", False),
    ("training", "1", "training", True),
    ("causal", "false", "causal", False),
    ("dtype", "bf16", "dtype", 4),
    ("attention", "unfused", "attention", 0),
    ("dropout", "0.1", "dropout", 0.1),
    ("hidden_dropout_prob", "0.1", "dropout", 0.1),
    ("resid_pdrop", "0", "dropout", 0),
    ("attention_dropout", "0.25", "attention_dropout", 0.25),
    ("attn_pdrop", "0.1", "attention_dropout", 0.1),
    ("attention_probs_dropout_prob", "0.1", "attention_dropout", 0.1),
    ("dropout", "1", errors.RangeError),  # a probability in [0, 1)
    ("attention_dropout", "-0.1", errors.RangeError),
    ("num_labels", "0", "num_labels", 0),
    ("num_labels", "2", errors.InvalidError),  # the base has no vocab: no output to classify
    ("num_labels", "-1", errors.RangeError),
    ("num_labels", "two", errors.ParseError),
    ("dropout", "often", errors.ParseError),
    ("hidden", "0", errors.RangeError),
    ("hidden", "x", errors.ParseError),
    ("kv_heads", "-1", errors.RangeError),
    ("tp", "2000", errors.RangeError),
    ("activation", "relu", errors.InvalidError),
    ("norm", "batchnorm", errors.InvalidError),
    ("swiglu", "maybe", errors.ParseError),
    ("dtype", "fp7", errors.InvalidError),
    ("attention", "magic", errors.InvalidError),
    ("batch", "4", errors.InvalidError),  # refused alias: names micro_batch
    ("mlp", "swiglu", errors.InvalidError),
    ("hiden", "1", errors.InvalidError),
]


def field(key):
    """The field a key sets (None for an unknown key), from the library."""
    return _lib.function("tc_model_config_field")(key.encode())


def typed(value):
    """The value as a Python program or a JSON file would give it."""
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def via_yaml(pairs):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        for key, value in pairs:
            f.write("%s: %s\n" % (key, value))
    try:
        return tilecast.model_config(f.name), None
    except tilecast.TilecastError as e:
        # "FILE:LINE:COL: message": the place is the file's own; a config
        # whose keys contradict each other: "FILE: model config: message"
        prefix = "%s:%d:" % (f.name, len(pairs))
        whole = "%s: model config: " % f.name
        if e.message.startswith(whole):
            return None, (type(e), e.message[len(whole):])
        return None, (type(e), e.message.split(": ", 1)[1] if e.message.startswith(prefix)
                      else e.message)
    finally:
        os.unlink(f.name)


def via_dict(pairs, convert):
    try:
        return tilecast.model_config({k: convert(v) for k, v in pairs}), None
    except tilecast.TilecastError as e:
        return None, (type(e), e.message[len("model config: "):]
                      if e.message.startswith("model config: ") else e.message)


def via_flags(pairs):
    args = [TILECAST_BIN, "predict", "layer", "--gpu", GPU, "--analytical", "--json"]
    for key, value in pairs:
        if (key, value) in SWITCHES:
            args.append(SWITCHES[key, value])
        elif key in FLAGS:
            args += [FLAGS[key], value]
        else:
            return None
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run(args, capture_output=True, text=True, env=env)


class TestConfigRoutes(unittest.TestCase):
    def test_same_config_or_error(self):
        for case in CASES:
            key, value = case[:2]
            pairs = tuple(p for p in BASE if field(p[0]) != field(key)) + ((key, value),)
            with self.subTest(key=key, value=value):
                cfg, err = via_yaml(pairs)
                for convert in (str, typed):
                    cfg2, err2 = via_dict(pairs, convert)
                    self.assertEqual(err, err2)
                    if cfg is not None:
                        self.assertEqual(bytes(cfg), bytes(cfg2))
                if len(case) == 3:
                    self.assertIsNotNone(err)
                    self.assertIs(err[0], case[2])
                    if not err[1].startswith("unknown key '%s'" % key):
                        # the message names the key and the value
                        self.assertTrue(err[1].startswith("%s: " % key), err[1])
                        self.assertIn(value, err[1])
                else:
                    self.assertIsNone(err, err)
                    self.assertEqual(getattr(cfg, case[2]), case[3])
                self.check_flags(pairs, cfg, err)

    def check_flags(self, pairs, cfg, err):
        if not TILECAST_BIN:
            return
        p = via_flags(pairs)
        if p is None:
            return  # a key without a flag
        key = pairs[-1][0]
        if err is not None:
            self.assertEqual(p.returncode, 2, p.stderr)
            # "tilecast predict layer: error: --flag: message without the key"
            self.assertIn("error: %s: %s" % (FLAGS.get(key, ""), err[1][len(key) + 2:]),
                          p.stderr)
            return
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        for field in ("hidden", "heads", "kv_heads", "head_dim", "ffn", "seq", "micro_batch",
                      "tp"):
            self.assertEqual(out[field], getattr(cfg, field), field)
        self.assertEqual(out["activation"], "swiglu" if cfg.swiglu else "gelu")
        self.assertEqual(out["mode"], "training" if cfg.training else "inference")
        # the rest (norm, causal, dtype, attention) through the layer's time
        layer = dict(pairs, layers="1")
        r = tilecast.predictor(analytical=True).predict_model(layer, GPU)
        self.assertAlmostEqual(out["layer_time_us"], r["layer_time_us"],
                               delta=r["layer_time_us"] * 1e-6)

    def test_two_keys_for_one_field(self):
        for a, b in (("hidden", "hidden_size"), ("activation", "swiglu")):
            pairs = BASE + ((a, "2048" if a == "hidden" else "gelu"),
                            (b, "2048" if a == "hidden" else "true"))
            with self.subTest(keys=(a, b)):
                _, err = via_yaml(pairs)
                self.assertIsNotNone(err)
                self.assertIn("'%s'" % a, err[1])
                _, err = via_dict(pairs, str)
                self.assertIsNotNone(err)
                self.assertIn("'%s'" % a, err[1])


if __name__ == "__main__":
    unittest.main()
