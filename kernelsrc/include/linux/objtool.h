#pragma once
/* objtool's annotations: nothing for a user-space build. */
#define __annotate_jump_table
