package tokenizer

import "fmt"

// Prompt counts a chat request's prompt tokens as the model's own
// tokenizer and chat template make them: the messages rendered by the
// template (with the assistant's header) and tokenised, added tokens
// included. The template's overhead is not estimated: it is in the
// rendered text, so the count is exact for the tokenizer.
type Prompt struct {
	Tokenizer *Tokenizer
	Template  *Template
}

// LoadPrompt loads the tokenizer.json at path and its chat template
// (LoadTemplate; templatePath, when set, names the template file).
func LoadPrompt(path, templatePath string) (*Prompt, error) {
	tok, err := Load(path)
	if err != nil {
		return nil, err
	}
	tmpl, err := LoadTemplate(path, templatePath)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return &Prompt{Tokenizer: tok, Template: tmpl}, nil
}

// Count is the prompt tokens of a chat request of a system message (none
// when "") and a user message.
func (p *Prompt) Count(system, user string) int {
	return p.Tokenizer.Count(p.Render(system, user))
}

// Render is the prompt text of a chat request.
func (p *Prompt) Render(system, user string) string {
	var msgs []Message
	if system != "" {
		msgs = append(msgs, Message{Role: "system", Content: system})
	}
	msgs = append(msgs, Message{Role: "user", Content: user})
	return p.Template.Render(msgs, true)
}

// WithoutNormalizer is the same prompt counted with the tokenizer's
// normalizer left out: what an engine that ignores tokenizer.json's
// normalizer counts (llama.cpp's GGUF has no field for it, so runs of
// spaces the model's normalizer collapses reach its BPE whole).
func (p *Prompt) WithoutNormalizer() *Prompt {
	return &Prompt{Tokenizer: p.Tokenizer.WithoutNormalizer(), Template: p.Template}
}
