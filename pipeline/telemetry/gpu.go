package telemetry

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
)

// mib is nvidia-smi's memory unit with nounits: 1 MiB = 2^20 bytes.
const mib = 1 << 20

// smiTimeout bounds one nvidia-smi call; a wedged driver must not hang a run.
const smiTimeout = 5 * time.Second

// GPU is the card an engine runs on, as nvidia-smi reports it. With several
// cards, Name, Driver and MemoryTotalBytes are the first card's and Count
// says how many there are.
type GPU struct {
	Name             string
	MemoryTotalBytes int64
	Driver           string
	CUDA             string // the highest CUDA version the driver supports
	Count            int
}

// GPUInfo asks nvidia-smi for the card's name, memory and driver, and the
// CUDA version from the header of its plain output. ok is false when there
// is no nvidia-smi or it fails.
func GPUInfo(ctx context.Context) (GPU, bool) {
	bin, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return GPU{}, false
	}
	out, err := runSMI(ctx, bin, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits")
	if err != nil {
		return GPU{}, false
	}
	g, err := parseSMIInfo(out)
	if err != nil {
		return GPU{}, false
	}
	if header, err := runSMI(ctx, bin); err == nil {
		g.CUDA = parseCUDAVersion(header)
	}
	return g, true
}

// runSMI runs nvidia-smi on the cards CUDA_VISIBLE_DEVICES names, when it
// names any (see smiSelection).
func runSMI(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, smiTimeout)
	defer cancel()
	if id := smiSelection(os.Getenv("CUDA_VISIBLE_DEVICES")); id != "" {
		args = append(args, "--id="+id)
	}
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("run nvidia-smi %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// smiSelection turns CUDA_VISIBLE_DEVICES into nvidia-smi's --id list. A
// local engine inherits extractbench's environment, so on a host of several
// cards a run started with CUDA_VISIBLE_DEVICES=1 measures card 1 only, not
// the sum of every card (another job's memory included). nvidia-smi ignores
// the variable itself. Entries are indices or GPU-/MIG- UUIDs; as CUDA does,
// the list ends at the first entry that is neither. "" means no selection
// (variable unset, empty, or nothing usable in it). nvidia-smi numbers cards
// in PCI bus order, CUDA by default fastest first: on a host of identical
// cards, the ones these runs are for, the two orders agree.
func smiSelection(visible string) string {
	var ids []string
	for _, e := range strings.Split(visible, ",") {
		e = strings.TrimSpace(e)
		_, err := strconv.ParseUint(e, 10, 32)
		if err != nil && !strings.HasPrefix(e, "GPU-") && !strings.HasPrefix(e, "MIG-") {
			break
		}
		ids = append(ids, e)
	}
	return strings.Join(ids, ",")
}

// parseSMIInfo reads "name, memory.total, driver_version" rows.
func parseSMIInfo(out []byte) (GPU, error) {
	rows, err := smiRows(out, 3)
	if err != nil {
		return GPU{}, err
	}
	total, err := parseMiB(rows[0][1])
	if err != nil {
		return GPU{}, fmt.Errorf("nvidia-smi memory.total: %w", err)
	}
	return GPU{Name: rows[0][0], MemoryTotalBytes: total, Driver: rows[0][2], Count: len(rows)}, nil
}

// parseSMIMemory reads "name, memory.used, memory.total" rows and returns
// the used and total bytes summed over the cards.
func parseSMIMemory(out []byte) (used, total int64, err error) {
	rows, err := smiRows(out, 3)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		u, err := parseMiB(r[1])
		if err != nil {
			return 0, 0, fmt.Errorf("nvidia-smi memory.used of %s: %w", r[0], err)
		}
		t, err := parseMiB(r[2])
		if err != nil {
			return 0, 0, fmt.Errorf("nvidia-smi memory.total of %s: %w", r[0], err)
		}
		used, total = used+u, total+t
	}
	return used, total, nil
}

func smiRows(out []byte, fields int) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = fields
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read nvidia-smi csv: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("read nvidia-smi csv: no GPU listed")
	}
	for _, row := range rows {
		for i := range row {
			row[i] = strings.TrimSpace(row[i])
		}
	}
	return rows, nil
}

// parseMiB reads a nounits MiB count; "[N/A]" and "[Not Supported]" are errors.
func parseMiB(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a MiB count: %q", s)
	}
	if n < 0 || n > (1<<63-1)/mib {
		return 0, fmt.Errorf("MiB count out of range: %q", s)
	}
	return n * mib, nil
}

var cudaVersionRE = regexp.MustCompile(`CUDA Version:\s*([0-9][0-9.]*)`)

// parseCUDAVersion finds "CUDA Version: 13.0" in nvidia-smi's header.
func parseCUDAVersion(header []byte) string {
	m := cudaVersionRE.FindSubmatch(header)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// EngineGPU describes the card a (non-simulated) engine runs on. A local
// engine's comes from nvidia-smi here, its name overridden by engine.gpu
// when the protocol gives one; a remote engine's is only what engine.gpu
// says: this machine's card is not the engine's.
func EngineGPU(ctx context.Context, e extractbench.Engine) extractbench.GPUInfoJSON {
	g := extractbench.GPUInfoJSON{Source: "unknown"}
	if e.IsLocal() {
		if smi, ok := GPUInfo(ctx); ok {
			g = extractbench.GPUInfoJSON{Name: smi.Name, MemoryTotalBytes: smi.MemoryTotalBytes, Driver: smi.Driver, CUDA: smi.CUDA, Source: "nvidia-smi"}
		}
	}
	if e.GPU != "" {
		g.Name = e.GPU
		if g.Source == "nvidia-smi" {
			g.Source = "protocol+nvidia-smi"
		} else {
			g.Source = "protocol"
		}
	}
	return g
}
