package worker

import (
	"encoding/binary"
	"fmt"
)

// protocolVersion is carried by the environment variable, the setup and the hello: a parent
// and a worker built from different versions of this package refuse each other clearly.
const protocolVersion = 1

// kind is a frame's meaning.
type kind uint8

const (
	kindSetup kind = iota + 1 // parent → worker, first: version; the rings' memfds ride as SCM_RIGHTS
	kindHello                 // worker → parent, in answer: version and pid
	kindCall                  // parent → worker: a request, by id
	kindReply                 // worker → parent: a response, by id
	kindError                 // worker → parent: a handler's error, by id: code and message
	kindPing                  // parent → worker: a heartbeat, by sequence number
	kindPong                  // worker → parent: its answer
	kindExit                  // parent → worker: finish serving and exit
	kindPost                  // parent → worker: a request that wants no answer (Post)
)

// headerSize is a frame's fixed part: kind (1 byte), 7 reserved, id (8), code (8), all
// little-endian; the payload follows.
const headerSize = 24

// frame is one message between parent and worker.
type frame struct {
	kind    kind
	id      uint64
	code    int64
	payload []byte
}

// appendFrame encodes f onto b.
func appendFrame(b []byte, k kind, id uint64, code int64, payload []byte) []byte {
	var h [headerSize]byte
	h[0] = byte(k)
	binary.LittleEndian.PutUint64(h[8:], id)
	binary.LittleEndian.PutUint64(h[16:], uint64(code))
	b = append(b, h[:]...)
	return append(b, payload...)
}

// parseFrame decodes b; the payload aliases b.
func parseFrame(b []byte) (frame, error) {
	if len(b) < headerSize {
		return frame{}, fmt.Errorf("worker: a %d-byte frame is shorter than its header", len(b))
	}
	k := kind(b[0])
	if k < kindSetup || k > kindPost {
		return frame{}, fmt.Errorf("worker: a frame of unknown kind %d", k)
	}
	return frame{
		kind:    k,
		id:      binary.LittleEndian.Uint64(b[8:]),
		code:    int64(binary.LittleEndian.Uint64(b[16:])),
		payload: b[headerSize:],
	}, nil
}
