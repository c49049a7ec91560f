package family

import (
	"context"
	"errors"
	"fmt"
)

// Generic is an engine of unknown kind: any OpenAI-compatible server. Its
// telemetry is a Prometheus /metrics read in whichever dialect it carries,
// and it has no cache reset.
var Generic = register(&Family{
	identify:  genericIdentity,
	Telemetry: Telemetry{Path: "/metrics", Missing: "whatever its /metrics does not carry in a known dialect"},
	Reset:     Reset{Note: "an engine of unknown kind has no prompt-cache reset a client can call"},
})

// genericIdentity asks every family's version endpoint, in All's order,
// and returns the first that names a version.
func genericIdentity(ctx context.Context, c Caller) (Identity, error) {
	var errs []error
	for _, path := range VersionPaths() {
		if ctx.Err() != nil {
			break
		}
		id, err := fieldsIdentity(path, []string{"version", "build_info"}, "")(ctx, c)
		if err == nil {
			return id, nil
		}
		errs = append(errs, err)
	}
	return Identity{}, fmt.Errorf("%w: %w", ErrNoIdentity, errors.Join(errs...))
}
