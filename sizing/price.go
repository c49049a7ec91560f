package sizing

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Prices is a user-editable price file: what one card costs per hour.
// extractbench ships only an example with placeholder figures
// (prices.example.yaml); market prices change by the week and are the
// user's to write.
type Prices struct {
	Path     string `yaml:"-" json:"path"`
	Currency string `yaml:"currency" json:"currency"`
	// Placeholder marks prices that are not quotes: every cost printed
	// from them says so.
	Placeholder bool   `yaml:"placeholder" json:"placeholder"`
	Note        string `yaml:"note" json:"note,omitempty"`
	// PerHour is card name (as the catalog or nvidia-smi names it) → price
	// of one card for one hour.
	PerHour map[string]float64 `yaml:"per_card_hour" json:"per_card_hour"`
}

// LoadPrices reads a price file. Unknown keys and non-positive prices are
// refused with the file and line, so that a typo never becomes a free card.
func LoadPrices(path string) (*Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read price file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	p := &Prices{Path: path}
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Currency == "" {
		return nil, fmt.Errorf("%s: currency: missing (USD, EUR, ...)", path)
	}
	if len(p.PerHour) == 0 {
		return nil, fmt.Errorf("%s: per_card_hour: no card priced", path)
	}
	for card, v := range p.PerHour {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s:%d: per_card_hour: %s: price %g: want a positive price per card-hour", path, lineOf(&doc, card), card, v)
		}
	}
	return p, nil
}

// lineOf finds the line of a mapping key in a YAML document, 0 when absent.
func lineOf(n *yaml.Node, key string) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	for _, c := range n.Content {
		if l := lineOf(c, key); l > 0 {
			return l
		}
	}
	return 0
}

// ErrNoPrice is returned (wrapped) when the price file has no price for a card.
var ErrNoPrice = errors.New("no price for the card")

// For is the price per hour of the named card: a key equal to it (ignoring
// case, spaces and vendor words), else the key naming the same catalog card.
func (p *Prices) For(gpu string) (float64, error) {
	if p == nil {
		return 0, ErrNoPrice
	}
	keys := make([]string, 0, len(p.PerHour))
	for k := range p.PerHour {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if normGPU(k) == normGPU(gpu) {
			return p.PerHour[k], nil
		}
	}
	if g, ok := FindGPU(gpu); ok {
		for _, k := range keys {
			if kg, ok := FindGPU(k); ok && kg.Name == g.Name {
				return p.PerHour[k], nil
			}
		}
	}
	return 0, fmt.Errorf("%w %q in %s (priced: %s)", ErrNoPrice, gpu, p.Path, strings.Join(keys, ", "))
}

// Label is what every cost printed from these prices carries.
func (p *Prices) Label() string {
	if p.Placeholder {
		return p.Currency + ", PLACEHOLDER prices from " + p.Path + ", not quotes"
	}
	return p.Currency + ", prices from " + p.Path
}
