# Cython declarations for outgoing.py (the compiled core, pure-Python mode): the memo's
# identity comparison becomes a C loop over the list's and the tuple's items. Without the
# compiled core the .py runs as it is.
import cython

@cython.locals(i=Py_ssize_t)
cpdef bint _same_pairs(list headers, tuple memo)
