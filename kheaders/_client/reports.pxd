# Cython declarations for reports.py (the compiled core, pure-Python mode): the reporter's and
# each report's fields as C fields. Without the compiled core the .py runs as it is, its
# __slots__ the same fields. Every report stays where the garbage collector sees it.

cdef class Reporter:
    cdef public object ack
    cdef public bint share
    cdef public dict _shared

cdef class Report:
    cdef public Reporter reporter
    cdef public object cb
    cdef public object sent
    cdef object __weakref__

cdef class JavaReport(Report):
    pass
