# Cython declarations for _delivery.py (the compiled core, pure-Python mode): the collector's
# untracking, which plain Python cannot reach. Without the compiled core the .py runs as it is.
cdef extern from "Python.h":
    void _untrack "PyObject_GC_UnTrack"(object op)
