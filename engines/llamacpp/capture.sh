#!/usr/bin/env bash
# capture.sh: starts a real llama-server (CPU) on the committed model and captures its wire
# formats with curl into engines/llamacpp/testdata/ (raw bytes: header dumps *.headers, bodies
# as sent). Run from anywhere; takes about a minute on 2 cores.
#
#   engines/llamacpp/capture.sh [TYPE]        TYPE as for gguf.sh (default q8_0)
#
# The server runs as the brief's: -c 16384 --parallel 4 (4,096 tokens a slot, so a long
# corpus/default document exceeds it), --alias extract-llama-15m --metrics --slots.
# A second server with --kv-unified -c 1024 --parallel 2 (two slots sharing 1,024 KV cells) is
# driven past its shared cells by two prompts at once, for the in-stream error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
type="${1:-q8_0}"
out="$here/testdata"
mkdir -p "$out"
work="$(mktemp -d)"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# body DOC_ID STREAM MAX_TOKENS: a chat request as extractbench sends it for corpus/default's DOC_ID
body() {
  python3 - "$root" "$1" "$2" "$3" <<'EOF'
import json, sys
root, doc_id, stream, max_tokens = sys.argv[1], sys.argv[2], sys.argv[3] == "true", int(sys.argv[4])
sys.path.insert(0, root + "/engines/transformers")
import extraction as ex  # the protocols' system and user prompt, as pipeline/protocol/default-protocol.yaml
doc = next(d for d in map(json.loads, open(root + "/corpus/default/documents.jsonl")) if d["id"] == doc_id)
req = {"model": "extract-llama-15m", "messages": ex.messages_for(doc["text"]), "max_tokens": max_tokens,
       "temperature": 0, "seed": 7, "stream": stream, "stream_options": {"include_usage": True}}
if not stream:
    del req["stream_options"]
print(json.dumps(req))
EOF
}

gguf="$(LLAMACPP_BIN="${LLAMACPP_BIN:-}" "$here/gguf.sh" "$type")"
bin="$(dirname "$("$here/build.sh" --source)")/bin"
bin="${LLAMACPP_BIN:-$bin}"

# ---------------------------------------------------------------- the brief's server
port="$(free_port)"
url="http://127.0.0.1:$port"
"$bin/llama-server" -m "$gguf" --alias extract-llama-15m --metrics --slots -c 16384 --parallel 4 \
  --host 127.0.0.1 --port "$port" >"$work/server.log" 2>&1 &
pids+=($!)
# /health while loading: poll as fast as curl can until it answers 200, keeping the first
# answer of each status.
for _ in $(seq 1 2000); do
  code="$(curl -s -o "$work/h.body" -D "$work/h.headers" -w '%{http_code}' "$url/health" || true)"
  if [[ "$code" != 000 && ! -e "$out/health-$code.body" ]]; then
    cp "$work/h.body" "$out/health-$code.body"
    cp "$work/h.headers" "$out/health-$code.headers"
  fi
  [[ "$code" == 200 ]] && break
  sleep 0.005
done

post() { # post NAME JSON_FILE: raw SSE or JSON answer with its headers
  curl -sN -D "$out/$1.headers" -o "$out/$1.body" -H 'Content-Type: application/json' \
    --data-binary @"$2" "$url/v1/chat/completions"
}

body doc-0002 true 48 >"$work/stream.json"
post chat-stream "$work/stream.json"
body doc-0002 false 48 >"$work/plain.json"
post chat-nonstream "$work/plain.json"
# A request that stops on max_tokens: finish_reason "length".
body doc-0002 true 5 >"$work/len.json"
post chat-stream-length "$work/len.json"

for ep in props health metrics slots v1/models; do
  n="${ep//\//-}"
  curl -s -D "$out/$n.headers" -o "$out/$n.body" "$url/$ep"
done

# Errors: a prompt over the slot's 4,096 tokens (streamed and not), invalid JSON, a
# model name that is not served, a missing messages field.
body doc-0249 true 48 >"$work/long.json"
post error-context-stream "$work/long.json"
body doc-0249 false 48 >"$work/long-plain.json"
post error-context-nonstream "$work/long-plain.json"
printf '{"model": "extract-llama-15m", "messages": [' >"$work/bad.json"
post error-invalid-json "$work/bad.json"
jq '.model = "no-such-model"' "$work/stream.json" >"$work/model.json"
post error-unknown-model "$work/model.json"
echo '{"model": "extract-llama-15m", "stream": true}' >"$work/nomsg.json"
post error-no-messages "$work/nomsg.json"

# /tokenize of the long document's rendered prompt, and what the model's tokenizer.json says.
python3 - "$root" "$url" "$out" <<'EOF'
import json, sys, urllib.request
root, url, out = sys.argv[1:]
sys.path.insert(0, root + "/engines/transformers")
import cpu_reference, extraction as ex
def post(path, body):
    r = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r))
doc = next(d for d in map(json.loads, open(root + "/corpus/default/documents.jsonl")) if d["id"] == "doc-0249")
msgs = ex.messages_for(doc["text"])
prompt = post("/apply-template", {"messages": msgs})["prompt"]
tok = post("/tokenize", {"content": prompt, "add_special": False, "parse_special": True})
raw = post("/tokenize", {"content": ex.render_chat(msgs), "add_special": False, "parse_special": True})
bpe = cpu_reference.BPE(root + "/engines/transformers/model/extract-llama-15m/tokenizer.json")
ref = bpe.encode(ex.render_chat(msgs))
with open(out + "/tokenize-doc-0249.json", "w") as f:
    json.dump({"doc": "doc-0249",
               "llama_tokens_templated": len(tok["tokens"]),
               "llama_tokens_untemplated": len(raw["tokens"]),
               "tokenizer_json_tokens": len(ref),
               "identical_ids": tok["tokens"] == ref}, f, indent=1)
    f.write("\n")
EOF

# Connection reuse: two streamed requests on one curl invocation (curl reuses the connection
# when the server keeps it open; its -v log says which).
curl -sv -N -H 'Content-Type: application/json' --data-binary @"$work/stream.json" \
  "$url/v1/chat/completions" "$url/v1/chat/completions" -o /dev/null -o /dev/null 2>"$work/keepalive.log" || true
grep -E '^\* (Re-using|Connected|Connection|Closing|Found bundle)|^[<>] (Connection|Keep-Alive|Transfer-Encoding|Content-Length)' \
  "$work/keepalive.log" >"$out/keepalive-stream.curl-v.txt" || true
curl -sv -H 'Content-Type: application/json' --data-binary @"$work/plain.json" \
  "$url/v1/chat/completions" "$url/v1/chat/completions" -o /dev/null -o /dev/null 2>"$work/keepalive2.log" || true
grep -E '^\* (Re-using|Connected|Connection|Closing|Found bundle)|^[<>] (Connection|Keep-Alive|Transfer-Encoding|Content-Length)' \
  "$work/keepalive2.log" >"$out/keepalive-nonstream.curl-v.txt" || true

cp "$work/server.log" "$out/server-cpu.log"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

# ---------------------------------------------------------------- in-stream error
# --kv-unified -c 1024 --parallel 2: two slots share 1,024 KV cells and each may grow to all
# of them. Alone, a request that generates past its end of text (ignore_eos) stops at the
# slot's 1,024 tokens (chat-stream-slot-full). Two at once (doc-0002, 211 prompt tokens,
# streaming; doc-0003, 984) overflow the shared cells: llama_decode fails and the server
# sends an error event to every request in flight, inside their 200 streams.
port="$(free_port)"
url="http://127.0.0.1:$port"
"$bin/llama-server" -m "$gguf" --alias extract-llama-15m --metrics --slots -c 1024 --parallel 2 --kv-unified \
  --host 127.0.0.1 --port "$port" >"$work/server-kvu.log" 2>&1 &
pids+=($!)
until curl -sf "$url/health" >/dev/null; do sleep 0.1; done
body doc-0002 true 2000 | jq '.ignore_eos = true' >"$work/full.json"
post chat-stream-slot-full "$work/full.json"
kv=()
i=0
for d in doc-0002 doc-0003; do
  i=$((i + 1))
  body "$d" true 2000 | jq '.ignore_eos = true' >"$work/kvu$i.json"
  curl -sN -D "$work/kvu$i.headers" -o "$work/kvu$i.body" -H 'Content-Type: application/json' \
    --data-binary @"$work/kvu$i.json" "$url/v1/chat/completions" &
  kv+=($!)
  sleep 0.3 # doc-0002 first: it is streaming when doc-0003's prefill overflows the cells
done
wait "${kv[@]}" || true
names=(error-in-stream-after-content error-in-stream-at-prefill)
for i in 1 2; do
  name=${names[$((i - 1))]}
  cp "$work/kvu$i.headers" "$out/$name.headers"
  cp "$work/kvu$i.body" "$out/$name.body"
done
cp "$work/server-kvu.log" "$out/server-cpu-kvu.log"
ls -la "$out" >&2
