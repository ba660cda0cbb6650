package main

import (
	"net"
	"sync"
)

// maxConns bounds the connections serve holds at once. Each costs memory
// (issue 23 measured about 200 KB for a webhook delivery held open
// mid-body: a goroutine, buffers, the body read so far), and the timeouts
// bound how long one is held, not how many: without a cap, a client
// opening thousands and sending slowly takes memory without bound. At the cap,
// further connections wait in the kernel's backlog until one closes.
// GitHub sends a delivery at a time per hook; 1,024 is far above what it
// and the run pages need.
const maxConns = 1024

// limitListener accepts at most cap(slots) connections at once.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func limitConns(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close also ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, once.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
