package interop

import "errors"

// ErrTransfer: a SendHandle or ReceiveHandle message was cut short (the peer closed the socket
// mid-message) or is not one SendHandle wrote.
var ErrTransfer = errors.New("gpuactor/interop: handle transfer failed")

// MaxHandlePayload is the largest payload SendHandle sends with a descriptor.
const MaxHandlePayload = 1 << 20
