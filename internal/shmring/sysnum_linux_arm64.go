package shmring

import "syscall"

// sysMemfdCreate is memfd_create's system call number.
const sysMemfdCreate = syscall.SYS_MEMFD_CREATE
