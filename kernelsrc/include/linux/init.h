/* Section markers of boot code: nothing here. A tree whose tools/include
 * has linux/init.h (6.12) gives its own; an older one (6.1) gets these. */
#pragma once
#if __has_include_next(<linux/init.h>)
#include_next <linux/init.h>
#else
#define __init
#define __exit
#define __initdata
#define __initconst
#define __refdata
#endif
