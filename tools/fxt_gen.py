"""Fuchsia trace format (FXT) records, for the tests (tests/cli/formats.sh)
and oracle experiments: the record layout trace_processor's
FuchsiaTraceTokenizer reads (importers/fuchsia/fuchsia_trace_tokenizer.cc).
No trace_processor needed."""
import struct

MAGIC = struct.pack("<Q", 0x0016547846040010)


def _words(n):
    return (n + 7) // 8


def _pad(b):
    return b + b"\0" * (_words(len(b)) * 8 - len(b))


def _rec(typ, body, fields=0, size=None):
    """A record: header (type 0-3, size in words 4-15, fields above) + body."""
    n = 1 + len(body) // 8 if size is None else size
    return struct.pack("<Q", typ | (n << 4) | fields) + body


def init(ticks_per_second):
    return _rec(1, struct.pack("<Q", ticks_per_second))


def string(index, s):
    b = s.encode()
    return _rec(2, _pad(b), (index << 16) | (len(b) << 32))


def thread(index, pid, tid):
    return _rec(3, struct.pack("<QQ", pid, tid), index << 16)


def provider_info(pid, name):
    b = name.encode()
    return _rec(0, _pad(b), (1 << 16) | (pid << 20) | (len(b) << 52))


def provider_section(pid):
    return _rec(0, b"", (2 << 16) | (pid << 20))


def _ref(s):
    """(ref, inline bytes) of a name: an int is a string-table index."""
    if isinstance(s, int):
        return s, b""
    b = s.encode()
    return 0x8000 | len(b), _pad(b)


def event(ticks, name, cat="cat", etype=0, thread=(1, 2), extra=b"", args=b"", n_args=0,
          size=None):
    """An event record: etype 0 instant, 2 begin, 3 end, 4 complete (extra:
    the end ticks); thread a (pid, tid) inline or a thread-table index."""
    cr, cb = _ref(cat)
    nr, nb = _ref(name)
    if isinstance(thread, int):
        tr, tb = thread, b""
    else:
        tr, tb = 0, struct.pack("<QQ", *thread)
    body = struct.pack("<Q", ticks) + tb + cb + nb + args + extra
    return _rec(4, body, (etype << 16) | (n_args << 20) | (tr << 24) | (cr << 32) | (nr << 48),
                size)


def complete(ticks, end, name, **kw):
    return event(ticks, name, etype=4, extra=struct.pack("<Q", end), **kw)


def switch(ticks, out_tid, in_tid, cpu=0):
    """A scheduler context switch record (event type 1)."""
    return _rec(8, struct.pack("<QQQ", ticks, out_tid, in_tid), (cpu << 20) | (1 << 60))


def wakeup(ticks, tid, cpu=0):
    """A scheduler thread wakeup record (event type 2)."""
    return _rec(8, struct.pack("<QQ", ticks, tid), (cpu << 20) | (2 << 60))


def legacy_switch(ticks, out=(1, 2), inc=(1, 3), cpu=0):
    """A legacy context switch (scheduler event type 0), threads inline."""
    return _rec(8, struct.pack("<QQQQQ", ticks, *out, *inc), (cpu << 16) | (0 << 60))


def blob(data, blob_type=3, name="b"):
    nr, nb = _ref(name)
    return _rec(5, nb + _pad(data), (nr << 16) | (len(data) << 32) | (blob_type << 48))


def kernel_process(koid, name):
    nr, nb = _ref(name)
    return _rec(7, struct.pack("<Q", koid) + nb, (1 << 16) | (nr << 24))
