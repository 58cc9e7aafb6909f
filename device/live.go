package device

// bufList is the device's live buffers, for Close to free: an intrusive doubly linked list,
// so that the actor adds and removes a buffer with a few pointer writes rather than a map
// insert and delete (hashing, growth) per stream-ordered allocation. Actor thread only.
type bufList struct{ head *Buffer }

func (l *bufList) add(b *Buffer) {
	b.prev, b.next = nil, l.head
	if l.head != nil {
		l.head.prev = b
	}
	l.head = b
}

// remove takes b out of the list; a buffer not in it is left alone.
func (l *bufList) remove(b *Buffer) {
	if b.prev == nil && l.head != b {
		return
	}
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	}
	b.prev, b.next = nil, nil
}
