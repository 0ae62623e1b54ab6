#pragma once
#include <linux/errno.h>
