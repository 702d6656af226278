# Cython declarations for traceparent.py (the compiled core, pure-Python mode): the private
# helpers become C functions and parse_traceparent is called in C by extract_trace_parent
# (still a Python function too). Without the compiled core the .py runs as it is.

cdef object _text(object value)
cdef object _parse55(bytes value)
cpdef object parse_traceparent(object value)
