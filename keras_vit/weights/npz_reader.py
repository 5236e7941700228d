"""Reads `.npz` checkpoints lazily and safely: array headers first (shapes
without data), then one array at a time; pickled objects are refused."""
import zipfile

import numpy as np

from keras_vit.weights.errors import WeightsError


class Entry:
    """One array of a checkpoint: its shape, and how to read it."""

    def __init__(self, shape, load):
        self.shape = tuple(shape)
        self.load = load


class NpzCheckpoint:
    def __init__(self, path):
        self.path = str(path)
        try:
            self._zip = zipfile.ZipFile(self.path)
        except FileNotFoundError:
            raise WeightsError(f"weights file {self.path!r} does not exist") from None
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise WeightsError(
                f"{self.path!r} is not a readable .npz archive ({e}); the file may be truncated "
                "or not a checkpoint: download it again or pass the right file"
            ) from None
        self.entries = {}
        for info in self._zip.infolist():
            if not info.filename.endswith(".npy"):
                continue
            key = info.filename[: -len(".npy")]
            shape, dtype = self._header(info)
            if dtype.hasobject:
                raise WeightsError(
                    f"{self.path!r}: array {key!r} holds Python objects; pickled data is never "
                    "loaded from weight files"
                )
            self.entries[key] = Entry(shape, lambda info=info: self._read(info))
        if not self.entries:
            raise WeightsError(f"{self.path!r} holds no arrays: not a checkpoint")

    def _header(self, info):
        try:
            with self._zip.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                else:
                    shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        except (ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise WeightsError(f"{self.path!r}: array {info.filename!r} is corrupt ({e})") from None
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if info.file_size < nbytes:
            raise WeightsError(
                f"{self.path!r}: array {info.filename!r} is truncated ({info.file_size} bytes for "
                f"{nbytes} of data); download the file again"
            )
        return shape, dtype

    def _read(self, info):
        try:
            with self._zip.open(info) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise WeightsError(f"{self.path!r}: cannot read array {info.filename!r} ({e})") from None

    def verify(self):
        """Reads every array through once (zip CRC checks, in 16 MB chunks)
        so that corrupt data is found before the model is touched."""
        for info in self._zip.infolist():
            try:
                with self._zip.open(info) as f:
                    while f.read(1 << 24):
                        pass
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
                raise WeightsError(f"{self.path!r}: array {info.filename!r} is corrupt ({e}); download the file again") from None

    def close(self):
        self._zip.close()
