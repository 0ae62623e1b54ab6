#pragma once
#include <asm-generic/errno.h>
#define ENOTSUPP 524  /* kernel-internal, as include/linux/errno.h */
