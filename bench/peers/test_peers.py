"""Argument parsing of peers.py, without CuPy, cuda.core or a GPU.

    python3 -m unittest discover -s bench/peers
"""

import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402  (the libraries are imported only when an impl starts)


class ParseArgs(unittest.TestCase):
    def test_the_runners_flags(self):
        a = peers.parse_args(["--scenarios", "graph_node,launch_roundtrip", "--sizes", "4096,1048576",
                              "--repeat", "5", "--device", "1", "--graph-sizes", "1,100"])
        self.assertEqual(a.graph_sizes, [1, 100])
        self.assertEqual(a.sizes, [4096, 1048576])
        self.assertEqual((a.repeat, a.device), (5, 1))
        self.assertEqual(a.wanted, {"graph_node", "launch_roundtrip"})

    def test_defaults(self):
        a = peers.parse_args([])
        self.assertEqual(a.graph_sizes, [1, 10, 100, 1000])
        self.assertEqual(a.wanted, set(peers.ALL_SCENARIOS))

    def test_graph_rows_run_at_the_graph_sizes(self):
        a = peers.parse_args(["--graph-sizes", "10", "--sizes", "64"])
        self.assertEqual(peers.sizes_of("graph_node", a), [10])
        self.assertEqual(peers.sizes_of("h2d_pinned", a), [64])
        self.assertEqual(peers.sizes_of("launch_roundtrip", a), [None])

    def test_bad_flags_exit_2(self):
        for bad in (["--graph-sizes", "0"], ["--graph-sizes", "x"], ["--repeat", "0"], ["--device", "-1"]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as e:
                    peers.parse_args(bad)
                self.assertEqual(e.exception.code, 2)
                self.assertIn(bad[0].lstrip("-"), err.getvalue())


if __name__ == "__main__":
    unittest.main()
