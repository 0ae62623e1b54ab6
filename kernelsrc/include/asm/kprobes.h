#pragma once
/* No kprobes in user space: the section attribute goes. */
#define __kprobes
