"""Read pickles without unpickling: the opcodes are interpreted here (:func:`read_pickle`).

:func:`evaltk.importers.torch_zip.read_torch` opens a ``torch.save`` file (zip or plain pickle) and
hands its ``data.pkl`` here; the object it holds is built only from an allow-list:

* plain data: ``dict``, ``collections.OrderedDict``, ``list``, ``tuple``, ``set``, ``frozenset``,
  ``str``, ``bytes``, ``bytearray``, ``int``, ``float``, ``complex`` (none), ``bool``, ``None``;
* tensors: ``torch._utils._rebuild_tensor_v2`` over a storage of one of torch's typed storage
  classes (``torch.FloatStorage``, ...), and ``torch._utils._rebuild_parameter`` (returned as a
  plain tensor);
* ``_codecs.encode(text, "latin1")``, which is how protocol 2 writes ``bytes``;
* numpy numeric scalars and arrays (``numpy.core.multiarray.scalar``/``_reconstruct``, ``numpy.dtype``),
  for Sample Factory's counters and normaliser statistics.

Any other global (a class, a function such as ``os.system`` or ``builtins.eval``), ``INST``/``OBJ``,
extension codes, or a persistent id that is not a storage is refused with :class:`RefusedPickleError`
naming it — the object is never imported, let alone called: this module never calls
``pickle.load``, ``torch.load`` or any other unpickler. Storage byte sizes are checked against the
zip entries and every tensor view against its storage. Malformed input raises
:class:`ForeignCheckpointError`, never another exception.
"""

from __future__ import annotations

import io
import pickletools
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from evaltk.importers.errors import ForeignCheckpointError, RefusedPickleError

MAX_PICKLE_BYTES = 64 << 20
"""Largest ``data.pkl`` (or plain pickle) read: a state dict's pickle is a few KiB to a few MiB."""

_STORAGE_DTYPES: dict[str, torch.dtype] = {
    "FloatStorage": torch.float32, "DoubleStorage": torch.float64, "HalfStorage": torch.float16,
    "BFloat16Storage": torch.bfloat16, "LongStorage": torch.int64, "IntStorage": torch.int32,
    "ShortStorage": torch.int16, "CharStorage": torch.int8, "ByteStorage": torch.uint8, "BoolStorage": torch.bool,
}
_NUMPY_MODULES = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMPY_KINDS = "biufc"


@dataclass(frozen=True)
class _StorageType:
    dtype: torch.dtype


@dataclass(frozen=True)
class Storage:
    """The bytes of one tensor storage and its element type (a persistent id resolved by the caller)."""

    data: bytes
    dtype: torch.dtype

    @property
    def numel(self) -> int:
        """Elements in the storage."""
        return len(self.data) // itemsize(self.dtype)


class _NdarrayClass:
    """The ``numpy.ndarray`` global: only a marker passed to ``_reconstruct``."""


class _PendingArray:
    """What ``numpy.core.multiarray._reconstruct`` returns until ``BUILD`` gives it its state."""


class _Mark:
    """The MARK opcode's stack marker."""


_MARK = _Mark()


def itemsize(dtype: torch.dtype) -> int:
    """Bytes per element of ``dtype``."""
    return torch.empty((), dtype=dtype).element_size()


def _refuse(name: str, what: str) -> RefusedPickleError:
    return RefusedPickleError(f"refused: {name} pickles {what} (only tensors and plain data are read)")


class _Reader:
    """One pass over a pickle's opcodes, building allowed objects on an explicit stack (no recursion)."""

    def __init__(self, name: str, storages: Callable[[str, torch.dtype, int], Storage] | None) -> None:
        self.name = name
        self.storages = storages
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}
        self.handlers: dict[str, Callable[[tuple[Any, ...]], Any]] = {
            "collections.OrderedDict": self._ordered_dict,
            "torch._utils._rebuild_tensor_v2": self._rebuild_tensor,
            "torch._utils._rebuild_parameter": self._rebuild_parameter,
            "numpy.dtype": self._np_dtype,
            "_codecs.encode": self._latin1_bytes,
            **{f"{m}.{k}": self._builtin(k) for m in ("builtins", "__builtin__")
               for k in ("set", "frozenset", "bytes")},
            **{f"{m}.scalar": self._np_scalar for m in _NUMPY_MODULES},
            **{f"{m}._reconstruct": self._np_reconstruct for m in _NUMPY_MODULES},
        }

    # --- globals -------------------------------------------------------------------------------------
    def global_(self, module: str, qualname: str) -> Any:
        full = f"{module}.{qualname}"
        if full in self.handlers:
            return _Callable(full)
        if module == "torch" and qualname in _STORAGE_DTYPES:
            return _StorageType(_STORAGE_DTYPES[qualname])
        if module == "numpy" and qualname == "ndarray":
            return _NdarrayClass()
        raise _refuse(self.name, f"{full!r}")

    def call(self, func: Any, args: Any) -> Any:
        if not isinstance(func, _Callable):
            raise _refuse(self.name, f"a call of {_describe(func)}")
        if not isinstance(args, tuple):
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: arguments of {func.name} are not a tuple")
        return self.handlers[func.name](args)

    # --- allowed constructors ------------------------------------------------------------------------
    def _ordered_dict(self, args: tuple[Any, ...]) -> Any:
        if not args:
            return OrderedDict()
        if len(args) == 1 and isinstance(args[0], list | tuple):
            return OrderedDict(args[0])
        raise ForeignCheckpointError(f"{self.name}: malformed pickle: OrderedDict{_describe(args)}")

    def _rebuild_tensor(self, args: tuple[Any, ...]) -> torch.Tensor:
        if not 6 <= len(args) <= 7:
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: _rebuild_tensor_v2 takes 6 or 7 arguments, "
                                         f"got {len(args)}")
        storage, offset, size, stride, _requires_grad, hooks = args[:6]
        if not isinstance(storage, Storage):
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: a tensor without a storage")
        if hooks:
            raise _refuse(self.name, "a tensor with backward hooks")
        return _view(self.name, storage, offset, size, stride)

    def _rebuild_parameter(self, args: tuple[Any, ...]) -> torch.Tensor:
        if len(args) != 3 or not isinstance(args[0], torch.Tensor):
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: _rebuild_parameter needs a tensor")
        if args[2]:
            raise _refuse(self.name, "a parameter with backward hooks")
        return args[0]

    def _builtin(self, kind: str) -> Callable[[tuple[Any, ...]], Any]:
        """``set``/``frozenset``/``bytes`` of a list or of nothing: how protocols 0-2 write them."""
        make: Callable[..., Any] = {"set": set, "frozenset": frozenset, "bytes": bytes}[kind]

        def call(args: tuple[Any, ...]) -> Any:
            if args == ():
                return make()
            if kind != "bytes" and len(args) == 1 and isinstance(args[0], list):
                return make(args[0])
            raise _refuse(self.name, f"'builtins.{kind}'{_describe(args)} (only empty or list arguments are read)")

        return call

    def _latin1_bytes(self, args: tuple[Any, ...]) -> bytes:
        """``_codecs.encode(text, "latin1")``: how pickle protocol 2 writes ``bytes``."""
        if len(args) != 2 or not isinstance(args[0], str) or args[1] not in ("latin1", "latin-1"):
            raise _refuse(self.name, f"'_codecs.encode'{_describe(args)} (only latin1 bytes are read)")
        return args[0].encode("latin1")

    def _np_dtype(self, args: tuple[Any, ...]) -> np.dtype[Any]:
        if not args or not isinstance(args[0], str) or len(args[0]) > 8:
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: numpy.dtype{_describe(args)}")
        try:
            dtype = np.dtype(args[0])
        except TypeError:
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: numpy dtype {args[0]!r}") from None
        if dtype.kind not in _NUMPY_KINDS or dtype.fields is not None or dtype.subdtype is not None:
            raise _refuse(self.name, f"a numpy array of dtype {dtype} (only numeric dtypes are read)")
        return dtype

    def _np_scalar(self, args: tuple[Any, ...]) -> Any:
        if len(args) != 2 or not isinstance(args[0], np.dtype) or not isinstance(args[1], bytes):
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: numpy scalar{_describe(args)}")
        if len(args[1]) != args[0].itemsize:
            raise ForeignCheckpointError(f"{self.name}: numpy scalar of dtype {args[0]} has {len(args[1])} bytes, "
                                         f"expected {args[0].itemsize}: the file is corrupt")
        return np.frombuffer(args[1], dtype=args[0])[0]

    def _np_reconstruct(self, args: tuple[Any, ...]) -> _PendingArray:
        if len(args) != 3 or not isinstance(args[0], _NdarrayClass):
            raise _refuse(self.name, f"numpy _reconstruct{_describe(args)} (only plain ndarrays are read)")
        return _PendingArray()

    def build(self, obj: Any, state: Any) -> Any:
        """``BUILD``: set a state. Only dicts (attributes ignored), dtypes and pending arrays accept one."""
        if isinstance(obj, dict):
            return obj  # e.g. a state dict's ``_metadata`` attribute: not needed, not set
        if isinstance(obj, np.dtype):
            if not isinstance(state, tuple) or len(state) < 2 or state[1] not in ("<", "|", "="):
                raise ForeignCheckpointError(f"{self.name}: numpy dtype state {_describe(state)} is not a "
                                             "little-endian numeric dtype")
            return obj
        if isinstance(obj, _PendingArray):
            return self._np_array(state)
        raise _refuse(self.name, f"state for {_describe(obj)}")

    def _np_array(self, state: Any) -> np.ndarray[Any, Any]:
        if not (isinstance(state, tuple) and len(state) == 5 and isinstance(state[1], tuple)
                and isinstance(state[2], np.dtype) and isinstance(state[4], bytes)):
            raise ForeignCheckpointError(f"{self.name}: malformed pickle: numpy array state {_describe(state)}")
        _, shape, dtype, fortran, data = state
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ForeignCheckpointError(f"{self.name}: numpy array shape {shape!r} is not a tuple of sizes")
        count = int(np.prod(shape, dtype=np.float64))
        if count * dtype.itemsize != len(data):
            raise ForeignCheckpointError(f"{self.name}: numpy array of shape {shape} and dtype {dtype} needs "
                                         f"{count * dtype.itemsize} bytes, the pickle holds {len(data)}")
        return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()

    def persistent(self, pid: Any) -> Storage:
        if self.storages is None:
            raise _refuse(self.name, f"the persistent id {_describe(pid)} outside a torch zip file")
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str) and isinstance(pid[4], int)):
            raise _refuse(self.name, f"the persistent id {_describe(pid)} (only tensor storages are read)")
        return self.storages(pid[2], pid[1].dtype, pid[4])

    def replace(self, old: Any, new: Any) -> None:
        """Point memo entries at ``new`` where they held ``old`` (``BUILD`` of an immutable result)."""
        for key, value in self.memo.items():
            if value is old:
                self.memo[key] = new

    def pop_mark(self) -> list[Any]:
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items


@dataclass(frozen=True)
class _Callable:
    name: str


def _describe(value: Any) -> str:
    if isinstance(value, _Callable):
        return repr(value.name)
    if isinstance(value, tuple):  # never repr a container: a fuzzed pickle can nest one a million levels deep
        return f"a tuple of {len(value)}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "a large int"
    text = repr(value) if isinstance(value, str | int | float | bytes | type(None)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _view(name: str, storage: Storage, offset: Any, size: Any, stride: Any) -> torch.Tensor:
    """Return a tensor copied from ``storage`` with the given view, every index checked to lie inside it."""
    ints = (isinstance(offset, int) and isinstance(size, tuple) and isinstance(stride, tuple)
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (offset, *size, *stride)))
    if not ints or len(size) != len(stride) or len(size) > 16:
        raise ForeignCheckpointError(f"{name}: tensor view offset={_describe(offset)} size={_describe(size)} "
                                     f"stride={_describe(stride)} is malformed: the file is corrupt")
    numel = 1
    for d in size:
        numel *= d
    if numel == 0:
        return torch.empty(size, dtype=storage.dtype)
    last = offset + sum((d - 1) * s for d, s in zip(size, stride, strict=True))
    if last >= storage.numel or numel > storage.numel:
        raise ForeignCheckpointError(f"{name}: tensor of size {list(size)} (stride {list(stride)}, offset {offset}) "
                                     f"reaches past its storage of {storage.numel} elements: the file is corrupt")
    base = torch.frombuffer(bytearray(storage.data), dtype=storage.dtype)
    return torch.as_strided(base, size, stride, offset).clone(memory_format=torch.contiguous_format)


_BINARY_OPS = {"SETITEM", "APPEND"}


def _step(r: _Reader, op: str, arg: Any) -> bool:
    """Execute one opcode on ``r``; returns True at ``STOP``."""
    s = r.stack
    if op in ("PROTO", "FRAME"):
        return False
    if op == "STOP":
        return True
    if op == "MARK":
        r.marks.append(len(s))
    elif op in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT", "UNICODE",
                "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
                "STRING", "BINSTRING", "SHORT_BINSTRING"):
        s.append(arg)
    elif op == "BYTEARRAY8":
        s.append(bytearray(arg))
    elif op in ("NONE", "NEWTRUE", "NEWFALSE"):
        s.append({"NONE": None, "NEWTRUE": True, "NEWFALSE": False}[op])
    elif op in ("EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "EMPTY_SET"):
        s.append({"EMPTY_DICT": dict, "EMPTY_LIST": list, "EMPTY_TUPLE": tuple, "EMPTY_SET": set}[op]())
    elif op in ("TUPLE1", "TUPLE2", "TUPLE3"):
        n = int(op[-1])
        if len(s) < n:
            raise IndexError("stack underflow")
        s[-n:] = [tuple(s[-n:])]
    elif op == "TUPLE":
        s.append(tuple(r.pop_mark()))
    elif op == "LIST":
        s.append(r.pop_mark())
    elif op == "DICT":
        items = r.pop_mark()
        s.append(dict(zip(items[::2], items[1::2], strict=True)))
    elif op == "FROZENSET":
        s.append(frozenset(r.pop_mark()))
    elif op in _BINARY_OPS:
        if op == "APPEND":
            value = s.pop()
            _container(s[-1], list).append(value)
        else:
            value, key = s.pop(), s.pop()
            _container(s[-1], dict)[key] = value
    elif op == "APPENDS":
        items = r.pop_mark()
        _container(s[-1], list).extend(items)
    elif op == "SETITEMS":
        items = r.pop_mark()
        target = _container(s[-1], dict)
        for key, value in zip(items[::2], items[1::2], strict=True):
            target[key] = value
    elif op == "ADDITEMS":
        items = r.pop_mark()
        _container(s[-1], set).update(items)
    elif op in ("PUT", "BINPUT", "LONG_BINPUT"):
        r.memo[int(arg)] = s[-1]
    elif op == "MEMOIZE":
        r.memo[len(r.memo)] = s[-1]
    elif op in ("GET", "BINGET", "LONG_BINGET"):
        s.append(r.memo[int(arg)])
    elif op == "POP":
        if r.marks and r.marks[-1] == len(s):
            r.marks.pop()
        else:
            s.pop()
    elif op == "POP_MARK":
        r.pop_mark()
    elif op == "DUP":
        s.append(s[-1])
    elif op == "GLOBAL":
        module, _, qualname = str(arg).partition(" ")
        s.append(r.global_(module, qualname))
    elif op == "STACK_GLOBAL":
        qualname, module = s.pop(), s.pop()
        if not isinstance(module, str) or not isinstance(qualname, str):
            raise TypeError("STACK_GLOBAL needs two strings")
        s.append(r.global_(module, qualname))
    elif op in ("REDUCE", "NEWOBJ"):
        args = s.pop()
        s.append(r.call(s.pop(), args))
    elif op == "NEWOBJ_EX":
        kwargs, args = s.pop(), s.pop()
        if kwargs:
            raise _refuse(r.name, "a constructor call with keyword arguments")
        s.append(r.call(s.pop(), args))
    elif op == "BUILD":
        state = s.pop()
        obj = s[-1]
        new = r.build(obj, state)
        if new is not obj:
            s[-1] = new
            r.replace(obj, new)
    elif op in ("PERSID", "BINPERSID"):
        pid = arg if op == "PERSID" else s.pop()
        s.append(r.persistent(pid))
    elif op in ("INST", "OBJ"):
        raise _refuse(r.name, f"an instance of {str(arg).replace(' ', '.')!r}" if arg else "an instance (OBJ)")
    elif op in ("EXT1", "EXT2", "EXT4"):
        raise _refuse(r.name, f"the extension code {arg}")
    else:
        raise _refuse(r.name, f"the opcode {op}")
    return False


def _container(obj: Any, kind: type) -> Any:
    if not isinstance(obj, kind):
        raise TypeError(f"{kind.__name__} opcode on a {type(obj).__name__}")
    return obj


def read_pickle(data: bytes, *, name: str,
                storages: Callable[[str, torch.dtype, int], Any] | None = None) -> Any:
    """Interpret the pickle ``data`` (allow-list only, see the module docstring) and return its object.

    ``name`` is used in messages (the file). ``storages(key, dtype, numel)`` resolves a torch storage
    persistent id; without it any persistent id is refused.
    """
    if len(data) > MAX_PICKLE_BYTES:
        raise ForeignCheckpointError(f"{name}: the pickle is {len(data)} bytes, over the {MAX_PICKLE_BYTES >> 20} "
                                     "MiB read for a policy's pickle")
    reader = _Reader(name, storages)
    pos: int | None = 0
    try:
        for opcode, arg, at in pickletools.genops(io.BytesIO(data)):
            pos = at
            if _step(reader, opcode.name, arg):
                if len(reader.stack) != 1 or reader.marks:
                    raise ValueError("the stack does not hold one object at STOP")
                return reader.stack[0]
    except ForeignCheckpointError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError, UnicodeDecodeError,
            RecursionError, MemoryError, RuntimeError, EOFError) as exc:
        raise ForeignCheckpointError(f"{name}: malformed pickle at byte {pos} ({type(exc).__name__}: "
                                     f"{str(exc)[:100]}): the file is corrupt or not a checkpoint") from None
    raise ForeignCheckpointError(f"{name}: the pickle ends without STOP: the file is truncated")


def tensor_dict(obj: Any, *, name: str, what: str = "a state dict") -> dict[str, torch.Tensor]:
    """Return ``obj`` as ``{str: Tensor}`` or raise :class:`ForeignCheckpointError` saying what it holds instead."""
    if not isinstance(obj, Mapping):
        raise ForeignCheckpointError(f"{name} holds {_describe(obj)}, not {what} (a dict of tensors)")
    out: dict[str, torch.Tensor] = {}
    for key, value in obj.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise ForeignCheckpointError(f"{name}: entry {_describe(key)} of {what} is {_describe(value)}, "
                                         "not a tensor")
        out[key] = value
    return out
