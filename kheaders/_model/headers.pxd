# Cython declarations for headers.py (the compiled core, pure-Python mode). Without the
# compiled core the .py runs as it is.

# _new_headers in C: what headers.py defines under "if not cython.compiled" (its reference,
# list.__new__), allocated by the type itself as list.__new__ does, without the call's
# argument tuples.
cdef extern from *:
    """
    static PyObject *kheaders_new_headers(PyObject *cls)
    {
        if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyList_Type)) {
            PyErr_SetString(PyExc_TypeError, "_new_headers() needs a list subtype");
            return NULL;
        }
        return ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    }
    """
    object _new_headers "kheaders_new_headers"(object cls)
