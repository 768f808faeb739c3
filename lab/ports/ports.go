// Package ports hands out loopback ports for the lab's listeners.
//
// A port the lab picks is bound later, sometimes seconds later (the
// apiserver's port is chosen before etcd starts). Two hazards live in that
// gap:
//
//   - Another connection takes it. A port from the kernel's ephemeral range
//     (what listening on :0 gives) may become the local port of any outgoing
//     connection on the machine. So ports are drawn below that range, where
//     only listeners go.
//   - The lab takes it twice. A port picked but not yet bound still looks
//     free, so a second pick (etcd's client or peer port after the
//     apiserver's) could land on it and the apiserver then failed with
//     "address already in use" (CI, December 2026). So every port handed out
//     is remembered for the life of the process and never handed out again.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Picker hands out free ports from [lo, hi), each at most once.
type Picker struct {
	lo, hi int
	mu     sync.Mutex
	given  map[int]bool
}

// NewPicker draws from [lo, hi); used as is by tests, which need a range
// small enough that a port given twice would show.
func NewPicker(lo, hi int) *Picker {
	return &Picker{lo: lo, hi: hi, given: map[int]bool{}}
}

var std = NewPicker(listenerRange())

// Free returns a port that is free now and not given out before by this
// process.
func Free() (int, error) { return std.Free() }

// Claim marks a port chosen elsewhere (a --port flag, a port saved by an
// earlier run) as given, after checking it is free.
func Claim(port int) error { return std.Claim(port) }

func (p *Picker) Free() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.hi - p.lo
	for i := 0; i < 200 && n > 0; i++ {
		port := p.lo + rand.IntN(n)
		if !p.given[port] && bindable(port) {
			p.given[port] = true
			return port, nil
		}
	}
	// The range is crowded: let the kernel choose, still once per port.
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !p.given[port] {
			p.given[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port on 127.0.0.1")
}

func (p *Picker) Claim(port int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.given[port] || !bindable(port) {
		return fmt.Errorf("port %d on 127.0.0.1 is in use", port)
	}
	p.given[port] = true
	return nil
}

// IsFree: nothing listens on 127.0.0.1:port and p has not given it out.
func (p *Picker) IsFree(port int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.given[port] && bindable(port)
}

func bindable(port int) bool {
	if port <= 0 || port > 65535 {
		return false
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// listenerRange: from 20000 up to the start of the kernel's ephemeral range
// (32768 if it cannot be read); 10000-20000 if that leaves too little.
func listenerRange() (int, int) {
	lo, hi := 20000, ephemeralLow()
	if hi-lo < 1000 {
		return 10000, 20000
	}
	return lo, hi
}

func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 1024 {
		return 32768
	}
	return n
}
