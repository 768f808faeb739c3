package ports

import (
	"fmt"
	"net"
	"testing"
)

// freeWindow finds n consecutive bindable ports in the listener range.
func freeWindow(t *testing.T, n int) int {
	lo, hi := listenerRange()
	for start := lo; start+n <= hi; start += n {
		ok := true
		for p := start; p < start+n && ok; p++ {
			ok = bindable(p)
		}
		if ok {
			return start
		}
	}
	t.Skip("no window of free ports")
	return 0
}

// The lab's case: the apiserver's port is picked, then etcd's two, before
// any is bound. From a range of three, the three must all differ.
func TestUnboundPortsAreNotGivenTwice(t *testing.T) {
	for round := 0; round < 50; round++ {
		lo := freeWindow(t, 3)
		p := NewPicker(lo, lo+3)
		seen := map[int]bool{}
		for i := 0; i < 3; i++ {
			port, err := p.Free()
			if err != nil {
				t.Fatal(err)
			}
			if port < lo || port >= lo+3 {
				t.Fatalf("round %d: port %d outside [%d, %d)", round, port, lo, lo+3)
			}
			if seen[port] {
				t.Fatalf("round %d: port %d given twice", round, port)
			}
			seen[port] = true
		}
	}
}

func TestClaimedPortIsNotGiven(t *testing.T) {
	lo := freeWindow(t, 2)
	p := NewPicker(lo, lo+2)
	if err := p.Claim(lo); err != nil {
		t.Fatal(err)
	}
	if p.IsFree(lo) {
		t.Fatalf("claimed port %d reported free", lo)
	}
	for i := 0; i < 20; i++ {
		// The first call gets lo+1; later ones fall back to the kernel.
		port, err := p.Free()
		if err != nil {
			t.Fatal(err)
		}
		if port == lo {
			t.Fatalf("claimed port %d given out", lo)
		}
	}
	if err := p.Claim(lo); err == nil {
		t.Fatalf("port %d claimed twice", lo)
	}
}

func TestBusyPortIsNotFree(t *testing.T) {
	lo := freeWindow(t, 1)
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", lo))
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	p := NewPicker(lo, lo+1)
	if p.IsFree(lo) {
		t.Fatalf("port %d reported free while listened on", lo)
	}
	if err := p.Claim(lo); err == nil {
		t.Fatalf("port %d claimed while listened on", lo)
	}
	port, err := p.Free()
	if err != nil || port == lo {
		t.Fatalf("Free() = %d, %v; want a port other than %d", port, err, lo)
	}
}
