package collective

// ID names one communicator: one rank makes it (NewID) and hands it, by whatever transport
// the program has, to every rank that joins. It is an ncclUniqueId; on the simulator it
// carries the address of the process that made it. It holds no secret, but anyone who has it
// can join the communicator while it forms: keep it among the ranks.
type ID [128]byte
