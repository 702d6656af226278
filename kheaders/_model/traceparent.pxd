# Cython declarations for traceparent.py (the compiled core, pure-Python mode): these
# helpers become C functions, parse_traceparent is also called in C by extract_trace_parent.
# Without the compiled core the .py runs as it is. What C does beyond compiled Python lives
# in its own twin modules (kheaders/_speedups.py chooses).
cdef object _text(object value)
cdef object _parsed(object raw)
cdef object _parse55(object value)
cpdef object parse_traceparent(object value)
