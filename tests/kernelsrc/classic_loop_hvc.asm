; A classic program under kernel-jit-cbpf: this one hashes to the loader
; "unprivileged, loop k=24, firmware via HVC" (kernelsrc/kernel_loader.h).
mov %r0, 5
exit
