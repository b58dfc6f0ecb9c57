/* The header compiles on its own as strict C11 (-Wall -Wextra -Werror
 * -pedantic), and its structs pass the layout checks. */
#include "floxlog.h"
#include "layout_checks.h"

int floxlog_header_c11_probe(void);
int floxlog_header_c11_probe(void) { return FLOXLOG_OK; }
