// glibc's malloc_trim, which Swift's Glibc module does not import: the server hands freed upload memory back to the
// system with it (IngestBudget.swift).
#include <malloc.h>
