package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Message is one chat message as a request sends it.
type Message struct{ Role, Content string }

// Template is a chat template in the Jinja subset that plain templates use
// (message role and content, replace filters, bos and eos tokens, one loop
// over messages, add_generation_prompt, transformers' whitespace control).
// It renders exactly what apply_chat_template does, so a prompt's tokens
// need no estimate of the template's; Parse refuses any other construct.
type Template struct {
	Source         string // where it was read from
	nodes          []node
	bos, eos       string
	addsGeneration bool
}

type nodeKind int

const (
	textNode nodeKind = iota
	roleNode
	contentNode
	bosNode
	eosNode
	forNode
	ifGenNode
)

type node struct {
	kind nodeKind
	text string
	body []node
	// replace is a role or content expression's `| replace(old, new)`
	// filters, applied in order (the retrained model's template collapses
	// runs of spaces so, extraction.CHAT_TEMPLATE_COLLAPSE).
	replace [][2]string
}

var (
	tagRE  = regexp.MustCompile(`(?s)\{\{-?\s*(.*?)\s*-?\}\}|\{%-?\s*(.*?)\s*-?%\}|\{#.*?#\}`)
	roleRE = regexp.MustCompile(`^message(\[\s*['"]role['"]\s*\]|\.role)$`)
	contRE = regexp.MustCompile(`^message(\[\s*['"]content['"]\s*\]|\.content)$`)
	forRE  = regexp.MustCompile(`^for\s+message\s+in\s+messages$`)
	ifGen  = regexp.MustCompile(`^if\s+add_generation_prompt$`)
)

// ParseTemplate reads a chat template's source; bos and eos are the
// tokenizer_config.json's bos_token and eos_token ("" when it has none).
func ParseTemplate(src, source, bos, eos string) (*Template, error) {
	src = strings.TrimSuffix(src, "\n") // Jinja's keep_trailing_newline=False
	src = applyWhitespaceControl(src)
	t := &Template{Source: source, bos: bos, eos: eos}
	var stack [][]node
	cur := []node{}
	var open []string
	at := 0
	for _, loc := range tagRE.FindAllStringSubmatchIndex(src, -1) {
		if loc[0] > at {
			cur = append(cur, node{kind: textNode, text: src[at:loc[0]]})
		}
		at = loc[1]
		switch {
		case loc[2] >= 0: // {{ expr }}
			expr, repl, err := replaceFilters(src[loc[2]:loc[3]])
			if err != nil {
				return nil, fmt.Errorf("chat template %s: {{ %s }}: %w", source, src[loc[2]:loc[3]], err)
			}
			switch {
			case roleRE.MatchString(expr):
				cur = append(cur, node{kind: roleNode, replace: repl})
			case contRE.MatchString(expr):
				cur = append(cur, node{kind: contentNode, replace: repl})
			case repl != nil:
				return nil, fmt.Errorf("chat template %s: {{ %s }}: replace applies to message['role'] or message['content'] only", source, src[loc[2]:loc[3]])
			case expr == "bos_token":
				cur = append(cur, node{kind: bosNode})
			case expr == "eos_token":
				cur = append(cur, node{kind: eosNode})
			default:
				return nil, fmt.Errorf("chat template %s: {{ %s }}: not implemented (only message['role'], message['content'], bos_token, eos_token)", source, expr)
			}
		case loc[4] >= 0: // {% stmt %}
			stmt := src[loc[4]:loc[5]]
			switch {
			case forRE.MatchString(stmt), ifGen.MatchString(stmt):
				stack = append(stack, cur)
				cur = []node{}
				open = append(open, stmt)
			case stmt == "endfor" || stmt == "endif":
				if len(open) == 0 || (stmt == "endfor") != strings.HasPrefix(open[len(open)-1], "for") {
					return nil, fmt.Errorf("chat template %s: {%% %s %%} closes nothing it opened", source, stmt)
				}
				kind := forNode
				if stmt == "endif" {
					kind, t.addsGeneration = ifGenNode, true
				}
				body := cur
				cur = stack[len(stack)-1]
				stack, open = stack[:len(stack)-1], open[:len(open)-1]
				cur = append(cur, node{kind: kind, body: body})
			default:
				return nil, fmt.Errorf("chat template %s: {%% %s %%}: not implemented (only for message in messages, if add_generation_prompt)", source, stmt)
			}
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("chat template %s: {%% %s %%} is never closed", source, open[len(open)-1])
	}
	if at < len(src) {
		cur = append(cur, node{kind: textNode, text: src[at:]})
	}
	t.nodes = cur
	return t, nil
}

// applyWhitespaceControl does what Jinja's "-" markers, trim_blocks and
// lstrip_blocks do to the text around tags, so that the parser sees only
// the text that is rendered.
func applyWhitespaceControl(src string) string {
	var b strings.Builder
	locs := tagRE.FindAllStringIndex(src, -1)
	at := 0
	for k, loc := range locs {
		orig := src[at:loc[0]]
		text := orig
		tag := src[loc[0]:loc[1]]
		block := strings.HasPrefix(tag, "{%") || strings.HasPrefix(tag, "{#")
		if k > 0 {
			prev := src[locs[k-1][0]:locs[k-1][1]]
			prevBlock := strings.HasPrefix(prev, "{%") || strings.HasPrefix(prev, "{#")
			switch {
			case strings.HasSuffix(prev, "-%}") || strings.HasSuffix(prev, "-}}"):
				text = strings.TrimLeft(text, " \t\r\n")
			case prevBlock: // trim_blocks: the first newline after a block
				text = strings.TrimPrefix(text, "\n")
			}
		}
		switch {
		case strings.HasPrefix(tag, "{%-") || strings.HasPrefix(tag, "{{-"):
			text = strings.TrimRight(text, " \t\r\n")
		case block && !strings.HasPrefix(tag, "{%+"): // lstrip_blocks: spaces from the line's start
			line := text[strings.LastIndex(text, "\n")+1:]
			if strings.Trim(line, " \t") == "" && (strings.Contains(orig, "\n") || k == 0) {
				text = text[:len(text)-len(line)]
			}
		}
		b.WriteString(text)
		b.WriteString(tag)
		at = loc[1]
	}
	rest := src[at:]
	if n := len(locs); n > 0 {
		prev := src[locs[n-1][0]:locs[n-1][1]]
		switch {
		case strings.HasSuffix(prev, "-%}") || strings.HasSuffix(prev, "-}}"):
			rest = strings.TrimLeft(rest, " \t\r\n")
		case strings.HasPrefix(prev, "{%") || strings.HasPrefix(prev, "{#"):
			rest = strings.TrimPrefix(rest, "\n")
		}
	}
	b.WriteString(rest)
	return b.String()
}

// Render is the prompt text of msgs, with the assistant's header when
// addGenerationPrompt (what a chat request gets).
func (t *Template) Render(msgs []Message, addGenerationPrompt bool) string {
	var b strings.Builder
	t.render(&b, t.nodes, msgs, nil, addGenerationPrompt)
	return b.String()
}

func (t *Template) render(b *strings.Builder, nodes []node, msgs []Message, m *Message, gen bool) {
	for _, n := range nodes {
		switch n.kind {
		case textNode:
			b.WriteString(n.text)
		case roleNode:
			if m != nil {
				b.WriteString(applyReplace(m.Role, n.replace))
			}
		case contentNode:
			if m != nil {
				b.WriteString(applyReplace(m.Content, n.replace))
			}
		case bosNode:
			b.WriteString(t.bos)
		case eosNode:
			b.WriteString(t.eos)
		case forNode:
			for i := range msgs {
				t.render(b, n.body, msgs, &msgs[i], gen)
			}
		case ifGenNode:
			if gen {
				t.render(b, n.body, msgs, m, gen)
			}
		}
	}
}

// LoadTemplate finds the chat template of the model whose tokenizer.json
// is at tokenizerPath, as transformers does: chat_template.jinja beside
// it, else tokenizer_config.json's chat_template. path, when set, is a
// template file named by the protocol instead.
func LoadTemplate(tokenizerPath, path string) (*Template, error) {
	dir := filepath.Dir(tokenizerPath)
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	if raw, err := os.ReadFile(cfgPath); err == nil {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("read %s: %w", cfgPath, err)
		}
	}
	bos, eos := specialText(cfg.BOS), specialText(cfg.EOS)
	if path == "" {
		path = filepath.Join(dir, "chat_template.jinja")
		if _, err := os.Stat(path); err != nil {
			var s string
			if len(cfg.ChatTemplate) == 0 || json.Unmarshal(cfg.ChatTemplate, &s) != nil || s == "" {
				return nil, errors.New("no chat template: neither " + path + " nor a chat_template string in " + cfgPath)
			}
			return ParseTemplate(s, cfgPath, bos, eos)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read chat template: %w", err)
	}
	return ParseTemplate(string(raw), path, bos, eos)
}

// specialText reads a tokenizer_config.json token: a string or an
// {"content": ...} object.
func specialText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}
