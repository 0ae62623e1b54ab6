#pragma once
/* The tools kernel.h, plus linux/align.h, which the kernel's includes. */
#include_next <linux/kernel.h>
#include <linux/align.h>
