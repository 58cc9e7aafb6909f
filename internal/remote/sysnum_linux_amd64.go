package remote

// sysMemfdCreate is memfd_create's number, which the syscall package does not name on amd64.
const sysMemfdCreate = 319
