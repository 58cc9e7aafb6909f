package shmring

// sysMemfdCreate is memfd_create's system call number: the frozen syscall package does not
// name it on amd64.
const sysMemfdCreate = 319
