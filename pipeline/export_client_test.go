package pipeline

import (
	"context"
	"net"
)

// SetClientDial makes f open the engine clients' connections of the runs
// that start until restore is called (clientDial).
func SetClientDial(f func(ctx context.Context, network, addr string) (net.Conn, error)) (restore func()) {
	old := clientDial
	clientDial = f
	return func() { clientDial = old }
}
