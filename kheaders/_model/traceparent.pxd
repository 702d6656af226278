# Cython declarations for traceparent.py (the compiled core, pure-Python mode): the private
# helpers become C functions, _parse55 reads the bytes into C integers, and parse_traceparent
# is called in C by extract_trace_parent (still a Python function too). Without the compiled
# core the .py runs as it is.
import cython

cdef object _text(object value)

@cython.locals(
    i=Py_ssize_t,
    data=cython.p_uchar,
    c=cython.uchar,
    digit=cython.uint,
    version=cython.uint,
    flags=cython.uint,
    high=cython.ulonglong,
    low=cython.ulonglong,
    parent=cython.ulonglong,
    trace_id=object,
)
cdef object _parse55(bytes value)

cpdef object parse_traceparent(object value)
