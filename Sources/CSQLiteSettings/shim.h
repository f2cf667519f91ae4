#include <sqlite3.h>

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0), which Swift cannot call (sqlite3_config is variadic). Before SQLite is
/// initialized (the first connection of the process), it turns memory statistics off and returns SQLITE_OK; after,
/// it changes nothing and returns SQLITE_MISUSE.
static inline int pushtrace_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
