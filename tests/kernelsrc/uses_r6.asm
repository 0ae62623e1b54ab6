# r0 = 1 + r6 (2): uses one callee-saved register.
mov %r0, 1
mov %r6, 2
add %r0, %r6
exit
