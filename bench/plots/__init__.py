"""Charts of the raw benchmark results in bench/results/ (run through scripts/plots).

parse reads the raw files and needs nothing beyond the standard library; style, codec, fuse, mkfs
and bitpack draw with matplotlib.
"""
