#pragma once
#include <uapi/linux/stddef.h>
#define sizeof_field(TYPE, MEMBER) sizeof((((TYPE *)0)->MEMBER))
