# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_reseam_global_optspecs
    string join \n V/version v/verbose h/help
end

function __fish_reseam_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_reseam_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_reseam_using_subcommand
    set -l cmd (__fish_reseam_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c reseam -n "__fish_reseam_needs_command" -s V -l version -d 'Print the version (with --verbose: the CPU, the kernels in use and the arithmetic)'
complete -c reseam -n "__fish_reseam_needs_command" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_needs_command" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "fetch" -d 'Downloads Firefox Translations models (verified) into the models folder'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "translate" -d 'Translates text from standard input to standard output, line by line'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "detect" -d 'Identifies the language of each input line: `language<TAB>confidence`'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "pack" -d 'Packs translation models into memory-mappable files (`model.reseam`), or checks them'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "serve" -d 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "health" -d 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "bench-gemm" -d 'Measures the int8 matrix products per instruction set against the CPU\'s peak'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "speculate" -d 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "bench" -d 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "generate" -d 'Writes the man page or shell completions (for packagers)'
complete -c reseam -n "__fish_reseam_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l models -d 'The models folder: one `<from>-<to>/` folder per pair, with Firefox\'s file names [default: the user data directory\'s reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l source -d 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)' -r
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l channel -d 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)' -r -f -a "release\t''
esr\t''
beta\t''
aurora\t''
nightly\t''
default\t''"
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l retries -d 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going' -r
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l timeout -d 'Seconds to wait for a connection, an answer, or the next bytes of a download' -r
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l mirror -d 'Write the records and compressed files LANGS needs into DIR, in the server\'s layout, instead of installing them; then use `--source DIR` elsewhere' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l allow-prerelease -d 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly'
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -l list -d 'Print the pairs the source offers (architecture, version, download size) and which are installed, instead of fetching'
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand fetch" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l models -d 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l threads -d 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l pin-from-core -d 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l arithmetic -d 'Integer arithmetic of the int8 products. Firefox\'s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere' -r -f -a "auto\t'What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW)'
saturating\t'Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox compute with `maddubs`: reproduces Firefox on AVX2 machines'
exact\t'Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU'"
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l mkl -d 'Summation orders of the float attention products. Firefox\'s engine sums them with Intel\'s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine' -r -f -a "auto\t'What Firefox computes on this CPU: MKL\'s AMD orders on AMD CPUs with AVX2 (Zen), its Intel orders elsewhere'
intel\t'MKL\'s orders on Intel CPUs (reproduces Firefox on Intel machines)'
zen\t'MKL\'s orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5)'"
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l pack-dir -d 'Keep packs in this folder (one subfolder per model) instead of next to the models' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l model -d 'The model file to use when the folder holds several (by default the int8 `model.*.intgemm.alphas.bin`, as Firefox). A name inside the folder or a path' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l batch -d 'Most sentences translated together on each compute thread, as a Bergamot worker\'s batch (larger is faster; the output does not change)' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l languages -d 'With FROM `auto`: the candidate languages, comma-separated (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox\'s languages when none is installed, as `reseam detect`]' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l source -d 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l channel -d 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)' -r -f -a "release\t''
esr\t''
beta\t''
aurora\t''
nightly\t''
default\t''"
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l retries -d 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l timeout -d 'Seconds to wait for a connection, an answer, or the next bytes of a download' -r
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l shortlist -d 'Restrict each sentence\'s output words to the model\'s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l no-pack -d 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l debug -d 'Print every layer\'s values to stderr in the format of Marian\'s debug() messages, to compare with Marian layer by layer'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l raw -d 'Leave links, e-mail addresses, emoji and @mentions to the model instead of keeping them out and putting them back; sentence splitting and spacing stay. For comparing the engine line for line with other engines'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l no-split -d 'Translate each line as one sentence instead of splitting it into sentences first, as Marian and Bergamot (`ssplit-mode: sentence`) read their input. Lines longer than the model\'s limit are still cut'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l offline -d 'Never download: fail if the pair (or its route through English) is not in the models folder. Without it a missing pair is fetched first, as `reseam fetch FROM-TO` would'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l jsonl -d 'Read and write JSON Lines: one object per line with a string `text` (one post, which may hold line breaks as `\\n`) and optional `from`, `to` (override FROM and TO) and `id` or any other fields. Each object comes back as it was, with `translation` added (and `detected`, `{"language", "confidence"}`, when the source is `auto`); a record that cannot be translated gets `error` instead, and the run goes on'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l html -d 'Read each line (record) as HTML: its text is translated and every tag, attribute, comment and entity kept byte for byte; `script`, `style`, `code`, `pre`, `translate="no"`, and links, mentions and hashtags in `<a>` (as Mastodon writes them) are not translated. Block tags (`p`, `br`, `li`...) end sentences; inline ones (`b`, `em`, `a`, `span`...) do not and are placed on the translated words, by the decoder\'s alignment, as Firefox does'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -s z -l null-data -d 'Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`), so that a post may hold line breaks; each translation is written followed by a NUL'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -l allow-prerelease -d 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand translate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reseam -n "__fish_reseam_using_subcommand detect" -l languages -d 'The candidate languages, comma-separated Firefox tags (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox\'s languages when none is installed]. Fewer candidates give more accurate and faster answers' -r
complete -c reseam -n "__fish_reseam_using_subcommand detect" -l models -d 'The models folder whose installed languages are the default candidates [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand detect" -s z -l null-data -d 'Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post may hold line breaks; output lines still end with a line break'
complete -c reseam -n "__fish_reseam_using_subcommand detect" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand detect" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand pack" -l models -d 'A folder of `<from>-<to>/` model folders [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand pack" -l pack-dir -d 'Keep packs in this folder (one subfolder per model) instead of next to the models' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand pack" -l check -d 'Verify the existing packs (sources unchanged, every blob\'s checksum) without writing; exit 1 if any is missing or bad'
complete -c reseam -n "__fish_reseam_using_subcommand pack" -l json -d 'One JSON object per model on stdout: {"model", "pack", "status", "why", "bytes"}'
complete -c reseam -n "__fish_reseam_using_subcommand pack" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand pack" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l models -d 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l threads -d 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l pin-from-core -d 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l arithmetic -d 'Integer arithmetic of the int8 products. Firefox\'s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere' -r -f -a "auto\t'What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW)'
saturating\t'Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox compute with `maddubs`: reproduces Firefox on AVX2 machines'
exact\t'Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU'"
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l mkl -d 'Summation orders of the float attention products. Firefox\'s engine sums them with Intel\'s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine' -r -f -a "auto\t'What Firefox computes on this CPU: MKL\'s AMD orders on AMD CPUs with AVX2 (Zen), its Intel orders elsewhere'
intel\t'MKL\'s orders on Intel CPUs (reproduces Firefox on Intel machines)'
zen\t'MKL\'s orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5)'"
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l pack-dir -d 'Keep packs in this folder (one subfolder per model) instead of next to the models' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l host -d 'Address to listen on (`::` for every IPv6 and IPv4 address)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l port -d 'Port to listen on (0: any free port, printed on stderr)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-batch -d 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-texts -d 'Most texts in one request (413 beyond)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-chars -d 'Most bytes of text in one request (413 beyond)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-pieces -d 'Most source pieces (the first model\'s SentencePiece tokens, about what a request costs to translate) of one request\'s texts of one source language; 413 beyond. Bytes undercount some scripts: 20,000 bytes of Chinese are 6,666 pieces, of English about 5,000. 0: no limit' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l http-threads -d 'Requests translating at once; more wait in a queue of --max-queue. Requests over a quarter of MAX_CHARS hold at most three quarters of them, so that light requests are not kept waiting behind heavy ones (whose sentences then take turns with theirs in the engine)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-queue -d 'Requests waiting for one of the HTTP_THREADS slots; beyond, 503 with Retry-After (429 on DeepL\'s routes, which DeepL\'s client libraries retry)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-body -d 'Largest request body in bytes; larger ones get 413 before they are read [default: 8 × MAX_CHARS + 64 KiB, room for JSON escapes]' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l max-connections -d 'Open connections at most. At the cap a new connection is still accepted and the one idle the longest is closed (after its current reply, if it had served requests); only when every open connection has a request in progress is the new one closed at once. Counts are logged once per 10 s' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l admin-port -d 'A second port that serves only /health, /ready, the heartbeats and /metrics, on connections of its own: probes and scrapers get through whatever floods --port' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l pressure-idle-timeout -d 'Seconds a connection may stay idle (no request in progress) while three quarters of MAX_CONNECTIONS are open, instead of READ_TIMEOUT: under a flood idle connections make room sooner' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l read-timeout -d 'Seconds a client has to send a request\'s headers (after which the connection is closed without a reply: no request arrived to answer), then its body (after which it gets 408 and the connection is closed); also how long an idle keep-alive connection stays open' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l drain-seconds -d 'Seconds to finish requests in flight after SIGTERM before exiting anyway (Kubernetes kills after 30 by default)' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l idle-seconds -d 'Seconds after which an unused model\'s pages are given back to the kernel (it pages back in on its next request), and after which an idle engine frees its working memory (activations, scores, decoder state); 0 keeps everything resident' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l token -d 'Token every request needs (except /health, /ready, the probes, the web page and LibreTranslate\'s /languages, /frontend/settings and /spec, which its clients read without a key), sent as `Authorization: Bearer`, raw `Authorization`, `DeepL-Auth-Key`, `X-API-Token`, `api_key` in the body or `token` in the query. Better given by file (--token-file) or systemd\'s credential `translate-token` than in the environment' -r
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l token-file -d 'File holding the token (its surrounding whitespace ignored)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l log-level -d 'Least severe messages logged: one `info` line per request (route, status, duration, text and byte counts; never the texts), `debug` for more' -r -f -a "error\t''
warn\t''
info\t''
debug\t''"
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l shortlist -d 'Restrict each sentence\'s output words to the model\'s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l no-pack -d 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
complete -c reseam -n "__fish_reseam_using_subcommand serve" -l preload -d 'Load and page in every model at startup; /ready answers 200 once done. Without it models load on first use (and /ready is 200 at once)'
complete -c reseam -n "__fish_reseam_using_subcommand serve" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reseam -n "__fish_reseam_using_subcommand health" -l host -d 'The server\'s address, as `serve` reads it' -r
complete -c reseam -n "__fish_reseam_using_subcommand health" -l port -d 'The server\'s port, as `serve` reads it' -r
complete -c reseam -n "__fish_reseam_using_subcommand health" -l url -d 'Ask this URL instead of one made from HOST, PORT and --ready' -r
complete -c reseam -n "__fish_reseam_using_subcommand health" -l timeout -d 'Seconds to wait for the answer' -r
complete -c reseam -n "__fish_reseam_using_subcommand health" -l ready -d 'Ask /ready instead of /health: 503 until the models are loaded and while draining'
complete -c reseam -n "__fish_reseam_using_subcommand health" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand health" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l isa -d 'Kernels to measure: `live` (the ones reseam uses here, see RESEAM_MT_ISA), `all` (every instruction set this CPU runs), or one of reference, avx2, avxvnni, avx512bw, avx512vnni, amx, neon' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l arithmetic -d 'Which arithmetic to measure: exact, saturating, or both' -r -f -a "exact\t''
saturating\t''
both\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l m -d 'Rows per product (sentences or tokens in flight), comma-separated' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l dims -d 'Translation-model widths whose shapes to measure (tiny 256, base-memory 384, base 512), comma-separated. Default: 256,384,512, or none when --llm is given' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l llm -d 'Decoder LLMs whose layer products to measure (llm-qkv, llm-o, llm-gate-up, llm-down, as reseam fuses them), comma-separated; `bench llm` states its prefill against these' -r -f -a "llama-3.2-1b\t''
qwen2.5-1.5b\t''
test\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l shape -d 'Only these shapes (comma-separated): attn-out (d×d), qkv (d×3d), ffn-up, ffn-down, logits-shortlist (d×1200), logits-full (d×32000); of an LLM, llm-qkv, llm-o, llm-gate-up, llm-down. Default: all' -r -f -a "attn-out\t''
qkv\t''
ffn-up\t''
ffn-down\t''
logits-shortlist\t''
logits-full\t''
llm-qkv\t''
llm-o\t''
llm-gate-up\t''
llm-down\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l min-time -d 'Seconds to spend on each measurement (the best of three runs is kept)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -l json -d 'One JSON object per line (isa, kernel, arithmetic, shape, m, n, k, gmacs, macs_per_cycle, peak_macs_per_cycle, peak_fraction, ...) instead of a table; peaks go to stderr'
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench-gemm" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l target -d 'The target model: a Hugging Face checkpoint folder (config.json, *.safetensors, tokenizer.json or tokenizer.model) of a Llama, Mistral or Qwen2 model' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l draft -d 'The draft model, a checkpoint folder like --target; its tokenizer may differ (tokens cross as text, see --strategy). Without it the target runs alone' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -s k -l k -d 'Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or 2,4,6). "auto" picks k every round from the running acceptance rate and the measured pass costs, to maximise the expected speedup; it drafts in every round while drafting is at least as likely to pay as not, and less often the less likely it is (never when it cannot: a draft as dear as the target)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l strategy -d 'How draft tokens become target tokens, comma-separated to compare: none (draft ids used as target ids; a control across vocabularies), naive (draft text re-encoded alone), context (re-encoded after the text of the last --prefix committed tokens). When draft and target share one vocabulary, every strategy takes the ids as they are' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l prefix -d 'Committed target tokens whose text the context strategy puts before the draft text' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l verify -d 'How the target checks candidates: batched (all in one pass; its k+1-row arithmetic may flip a near-tie, which the report lists with its logit margin) or exact (one pass per candidate, as plain decoding: output identical to the target alone, slow)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l baseline -d 'When the target alone is timed for the speedups: paired (again right before each configuration\'s run of each prompt, so each speedup is against a baseline measured seconds apart and a machine whose speed drifts, e.g. a shared VM or one still warming up, moves both sides alike; about twice the time) or once (before all configurations: faster, but a configuration that never drafted was reported 1.2x faster than the target alone timed cold). Both warm the target and the draft up on the first prompt, untimed, and report every speedup with its 95% interval over the prompts' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l order -d 'In what order configurations and prompts run: interleaved (each prompt through every configuration in turn, so a slow stretch of a shared machine falls on all of them alike and their speedups can be compared) or grouped (each configuration over all prompts before the next; a stretch of seconds then favours or penalises whole configurations)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l draft-vocab-corpus -d 'Text whose tokens, in the draft\'s tokenizer, make the draft\'s output layer (FR-Spec): the draft computes logits only for the --draft-vocab ids most frequent in FILE (one text per line, e.g. a corpus of the prompts\' language) and its end-of-sequence ids, so a small draft with a large vocabulary (Qwen2.5, Llama 3) passes at a fraction of the cost. The target still verifies in its whole vocabulary: output is unchanged' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l draft-vocab -d 'With --draft-vocab-corpus: how many of the most frequent ids the draft keeps (0: every id that occurs in the corpus)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l lookbehind -d 'Draft tokens the draft\'s re-synchronisation may look back for a word start to re-encode the committed text from' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l k-max -d 'The longest draft -k auto may choose' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l divergence-tolerance -d 'Largest logit margin (top-1 minus top-2 of the target alone) at which a batched divergence counts as a near-tie rather than a bug' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l csv -d 'With --draft: write one row per configuration as CSV to FILE' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l plot -d 'With --draft: plot measured and predicted speedup against k, with the break-even line, as SVG to FILE' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l prompts -d 'Prompts: one per line, or JSON Lines with a "prompt" or "instruction" field (pl_alpaca style; an "input" field is appended). "-" reads standard input' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l max-new-tokens -d 'New tokens per prompt at most (fewer if the model ends its answer)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l precision -d 'Weights: int8 (per-row int8 weights, per-token int8 activations, exact int32 products; packed once and memory-mapped), bf16 (bf16 weights, f32 arithmetic) or f32 (for checking against Transformers)' -r
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l json -d 'Write the report as JSON to FILE ("-": standard output), in the schema of docs/speculate-json.md: the baseline (per prompt "prompt", "prompt_ids", "output_ids", "text" and timings) and, with --draft, one run per configuration (acceptance, speedup, cost model, divergences)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l pack-dir -d 'Folder for packed int8 weights (default: the user cache, ~/.cache/reseam/packed)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l chat -d 'Wrap each prompt as the user turn of the model\'s chat template, with the assistant turn opened (as apply_chat_template(add_generation_prompt=True))'
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l ignore-eos -d 'Do not stop at the model\'s end-of-sequence tokens (generation_config.json\'s eos_token_id): always make --max-new-tokens tokens'
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -l no-pack -d 'Quantize int8 weights in memory on every run instead of packing them to a file once'
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand speculate" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "memory" -d 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "llm" -d 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "speculate" -d 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "translate" -d 'The translation service\'s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process\'s memory'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "serve" -d 'A running server over HTTP (`reseam serve`, or any server of the seed\'s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server\'s memory from its /metrics'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "models" -d 'Every model of a folder (or synthetic ones at Firefox\'s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and not __fish_seen_subcommand_from memory llm speculate translate serve models help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from memory" -l size-mib -d 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from memory" -l json -d 'Print the figures as JSON instead of text'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from memory" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from memory" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l shape -d 'Model shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)' -r -f -a "llama-3.2-1b\t''
qwen2.5-1.5b\t''
test\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l prefill-tokens -d 'Prompt length of the prefill measurement' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l decode-tokens -d 'Tokens generated one forward each for the decode measurement' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l gemm-rows -d 'Rows (M) of the int8 GEMM throughput measurement: one pass over all of the model\'s int8 products (its own weights) at M rows, against which the prefill is stated' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l gemm-min-time -d 'Seconds of `bench-gemm`\'s measurement of each of one layer\'s products (its `--min-time`), the third figure the prefill is stated against: one thread, warm bursts, times the threads' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l seed -d 'Seed of the random weights' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l size-mib -d 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -l json -d 'Print the figures as JSON instead of text'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from llm" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l shape -d 'Target shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)' -r -f -a "llama-3.2-1b\t''
qwen2.5-1.5b\t''
test\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l ratio -d 'The small draft has about 1/RATIO of the target\'s layer weights (same vocabulary)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -s k -l k -d 'Draft lengths, comma-separated' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l prompts -d 'Random prompts decoded per configuration' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l prompt-tokens -d 'Tokens per random prompt' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l max-new-tokens -d 'Tokens generated per prompt (more: steadier figures, longer run)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l precision -d 'Weights of the generated models: int8, bf16 or f32' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l tolerance -d 'Largest relative gap between measured and predicted speedup counted as agreement' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l seed -d 'Seed of the random weights and prompts' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -l json -d 'Print the figures (and both full reports) as JSON instead of the table'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from speculate" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l models -d 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l threads -d 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l pin-from-core -d 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l arithmetic -d 'Integer arithmetic of the int8 products. Firefox\'s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere' -r -f -a "auto\t'What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW)'
saturating\t'Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox compute with `maddubs`: reproduces Firefox on AVX2 machines'
exact\t'Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU'"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l mkl -d 'Summation orders of the float attention products. Firefox\'s engine sums them with Intel\'s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine' -r -f -a "auto\t'What Firefox computes on this CPU: MKL\'s AMD orders on AMD CPUs with AVX2 (Zen), its Intel orders elsewhere'
intel\t'MKL\'s orders on Intel CPUs (reproduces Firefox on Intel machines)'
zen\t'MKL\'s orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5)'"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l pack-dir -d 'Keep packs in this folder (one subfolder per model) instead of next to the models' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l corpus -d 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\\n` in a text is a line break)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -s n -l requests -d 'Requests of the throughput phase (the corpus is repeated as needed)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l clients -d 'Concurrent clients, each sending one post and waiting for its translation' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l max-batch -d 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l latency-requests -d 'Requests of the idle-latency phase (one at a time)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l out -d 'Per request: direction, characters, latency in ms (TSV)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l shortlist -d 'Restrict each sentence\'s output words to the model\'s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l no-pack -d 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l skip-latency -d 'Skip the idle-latency phase'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l preload -d 'Load every model before timing (always done: the flag is kept for the seed\'s BENCH_PRELOAD=1)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -l json -d 'Print the summary as one JSON object'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from translate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l url -d 'The server\'s root URL' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l corpus -d 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\\n` in a text is a line break)' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -s n -l requests -d 'Requests to send (the corpus is repeated as needed)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l clients -d 'Concurrent clients, each on its own connection, sending one request and waiting for it' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l texts -d 'Posts per request (consecutive corpus lines of one direction)' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l token -d 'The server\'s token, if it needs one' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l timeout -d 'Seconds a request may take before it counts as failed' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l out -d 'Write each corpus line\'s translation (`index<TAB>translation`, `\\n` escaped), for comparing with `reseam translate`' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -l json -d 'Print the summary as one JSON object'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l models -d 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory\'s reseam/models, e.g. ~/.local/share/reseam/models]' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l threads -d 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l pin-from-core -d 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l arithmetic -d 'Integer arithmetic of the int8 products. Firefox\'s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere' -r -f -a "auto\t'What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW)'
saturating\t'Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox compute with `maddubs`: reproduces Firefox on AVX2 machines'
exact\t'Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU'"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l mkl -d 'Summation orders of the float attention products. Firefox\'s engine sums them with Intel\'s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine' -r -f -a "auto\t'What Firefox computes on this CPU: MKL\'s AMD orders on AMD CPUs with AVX2 (Zen), its Intel orders elsewhere'
intel\t'MKL\'s orders on Intel CPUs (reproduces Firefox on Intel machines)'
zen\t'MKL\'s orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5)'"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l pack-dir -d 'Keep packs in this folder (one subfolder per model) instead of next to the models' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l synthetic -d 'First write random-weight models of these architectures (model i gets the i-th, in turn) in Mozilla\'s int8 format with 32,000-piece vocabularies and shortlists, under the pair names es-en, en-es, fr-en, en-fr, ...' -r -f -a "tiny\t''
base-memory\t''
base\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l count -d 'How many synthetic models' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l synthetic-dir -d 'Where to write the synthetic models, kept after the run (default: a temporary folder, removed at the end). Files already holding the bytes they would get are left alone' -r -F
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l seed -d 'Seed of the synthetic weights, vocabularies and shortlists' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l sentence -d 'The sentence every model translates' -r
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l phase -d 'Run one measured phase in this process and print its JSON (what the parent runs)' -r -f -a "cold\t''
warm\t''"
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l shortlist -d 'Restrict each sentence\'s output words to the model\'s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l no-pack -d 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l skip-cold -d 'Skip the cold-cache load'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -l json -d 'Print the figures as one JSON object'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from models" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "memory" -d 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "llm" -d 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "speculate" -d 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "translate" -d 'The translation service\'s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process\'s memory'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "serve" -d 'A running server over HTTP (`reseam serve`, or any server of the seed\'s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server\'s memory from its /metrics'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "models" -d 'Every model of a folder (or synthetic ones at Firefox\'s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
complete -c reseam -n "__fish_reseam_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and not __fish_seen_subcommand_from man completions help" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and not __fish_seen_subcommand_from man completions help" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and not __fish_seen_subcommand_from man completions help" -f -a "man" -d 'Man pages (reseam.1 and one per subcommand) into DIR'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and not __fish_seen_subcommand_from man completions help" -f -a "completions" -d 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and not __fish_seen_subcommand_from man completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from man" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from man" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from completions" -s v -l verbose -d 'More detail (with --version: kernels and CPU features)'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from completions" -s h -l help -d 'Print help'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from help" -f -a "man" -d 'Man pages (reseam.1 and one per subcommand) into DIR'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from help" -f -a "completions" -d 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
complete -c reseam -n "__fish_reseam_using_subcommand generate; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "fetch" -d 'Downloads Firefox Translations models (verified) into the models folder'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "translate" -d 'Translates text from standard input to standard output, line by line'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "detect" -d 'Identifies the language of each input line: `language<TAB>confidence`'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "pack" -d 'Packs translation models into memory-mappable files (`model.reseam`), or checks them'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "serve" -d 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "health" -d 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "bench-gemm" -d 'Measures the int8 matrix products per instruction set against the CPU\'s peak'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "speculate" -d 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "bench" -d 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "generate" -d 'Writes the man page or shell completions (for packagers)'
complete -c reseam -n "__fish_reseam_using_subcommand help; and not __fish_seen_subcommand_from fetch translate detect pack serve health bench-gemm speculate bench generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "memory" -d 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "llm" -d 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "speculate" -d 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "translate" -d 'The translation service\'s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process\'s memory'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "serve" -d 'A running server over HTTP (`reseam serve`, or any server of the seed\'s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server\'s memory from its /metrics'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "models" -d 'Every model of a folder (or synthetic ones at Firefox\'s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from generate" -f -a "man" -d 'Man pages (reseam.1 and one per subcommand) into DIR'
complete -c reseam -n "__fish_reseam_using_subcommand help; and __fish_seen_subcommand_from generate" -f -a "completions" -d 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
