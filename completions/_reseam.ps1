
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'reseam' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'reseam'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'reseam' {
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print the version (with --verbose: the CPU, the kernels in use and the arithmetic)')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print the version (with --verbose: the CPU, the kernels in use and the arithmetic)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('fetch', 'fetch', [CompletionResultType]::ParameterValue, 'Downloads Firefox Translations models (verified) into the models folder')
            [CompletionResult]::new('translate', 'translate', [CompletionResultType]::ParameterValue, 'Translates text from standard input to standard output, line by line')
            [CompletionResult]::new('detect', 'detect', [CompletionResultType]::ParameterValue, 'Identifies the language of each input line: `language<TAB>confidence`')
            [CompletionResult]::new('pack', 'pack', [CompletionResultType]::ParameterValue, 'Packs translation models into memory-mappable files (`model.reseam`), or checks them')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs')
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr')
            [CompletionResult]::new('bench-gemm', 'bench-gemm', [CompletionResultType]::ParameterValue, 'Measures the int8 matrix products per instruction set against the CPU''s peak')
            [CompletionResult]::new('speculate', 'speculate', [CompletionResultType]::ParameterValue, 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Writes the man page or shell completions (for packagers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;fetch' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'The models folder: one `<from>-<to>/` folder per pair, with Firefox''s file names [default: the user data directory''s reseam/models]')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for a connection, an answer, or the next bytes of a download')
            [CompletionResult]::new('--mirror', '--mirror', [CompletionResultType]::ParameterName, 'Write the records and compressed files LANGS needs into DIR, in the server''s layout, instead of installing them; then use `--source DIR` elsewhere')
            [CompletionResult]::new('--allow-prerelease', '--allow-prerelease', [CompletionResultType]::ParameterName, 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly')
            [CompletionResult]::new('--list', '--list', [CompletionResultType]::ParameterName, 'Print the pairs the source offers (architecture, version, download size) and which are installed, instead of fetching')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;translate' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change')
            [CompletionResult]::new('--pin-from-core', '--pin-from-core', [CompletionResultType]::ParameterName, 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process')
            [CompletionResult]::new('--arithmetic', '--arithmetic', [CompletionResultType]::ParameterName, 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere')
            [CompletionResult]::new('--mkl', '--mkl', [CompletionResultType]::ParameterName, 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Keep packs in this folder (one subfolder per model) instead of next to the models')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model file to use when the folder holds several (by default the int8 `model.*.intgemm.alphas.bin`, as Firefox). A name inside the folder or a path')
            [CompletionResult]::new('--batch', '--batch', [CompletionResultType]::ParameterName, 'Most sentences translated together on each compute thread, as a Bergamot worker''s batch (larger is faster; the output does not change)')
            [CompletionResult]::new('--languages', '--languages', [CompletionResultType]::ParameterName, 'With FROM `auto`: the candidate languages, comma-separated (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox''s languages when none is installed, as `reseam detect`]')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for a connection, an answer, or the next bytes of a download')
            [CompletionResult]::new('--shortlist', '--shortlist', [CompletionResultType]::ParameterName, 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox')
            [CompletionResult]::new('--no-pack', '--no-pack', [CompletionResultType]::ParameterName, 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)')
            [CompletionResult]::new('--debug', '--debug', [CompletionResultType]::ParameterName, 'Print every layer''s values to stderr in the format of Marian''s debug() messages, to compare with Marian layer by layer')
            [CompletionResult]::new('--raw', '--raw', [CompletionResultType]::ParameterName, 'Leave links, e-mail addresses, emoji and @mentions to the model instead of keeping them out and putting them back; sentence splitting and spacing stay. For comparing the engine line for line with other engines')
            [CompletionResult]::new('--no-split', '--no-split', [CompletionResultType]::ParameterName, 'Translate each line as one sentence instead of splitting it into sentences first, as Marian and Bergamot (`ssplit-mode: sentence`) read their input. Lines longer than the model''s limit are still cut')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'Never download: fail if the pair (or its route through English) is not in the models folder. Without it a missing pair is fetched first, as `reseam fetch FROM-TO` would')
            [CompletionResult]::new('--jsonl', '--jsonl', [CompletionResultType]::ParameterName, 'Read and write JSON Lines: one object per line with a string `text` (one post, which may hold line breaks as `\n`) and optional `from`, `to` (override FROM and TO) and `id` or any other fields. Each object comes back as it was, with `translation` added (and `detected`, `{"language", "confidence"}`, when the source is `auto`); a record that cannot be translated gets `error` instead, and the run goes on')
            [CompletionResult]::new('--html', '--html', [CompletionResultType]::ParameterName, 'Read each line (record) as HTML: its text is translated and every tag, attribute, comment and entity kept byte for byte; `script`, `style`, `code`, `pre`, `translate="no"`, and links, mentions and hashtags in `<a>` (as Mastodon writes them) are not translated. Block tags (`p`, `br`, `li`...) end sentences; inline ones (`b`, `em`, `a`, `span`...) do not and are placed on the translated words, by the decoder''s alignment, as Firefox does')
            [CompletionResult]::new('-z', '-z', [CompletionResultType]::ParameterName, 'Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`), so that a post may hold line breaks; each translation is written followed by a NUL')
            [CompletionResult]::new('--null-data', '--null-data', [CompletionResultType]::ParameterName, 'Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`), so that a post may hold line breaks; each translation is written followed by a NUL')
            [CompletionResult]::new('--allow-prerelease', '--allow-prerelease', [CompletionResultType]::ParameterName, 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'reseam;detect' {
            [CompletionResult]::new('--languages', '--languages', [CompletionResultType]::ParameterName, 'The candidate languages, comma-separated Firefox tags (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox''s languages when none is installed]. Fewer candidates give more accurate and faster answers')
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'The models folder whose installed languages are the default candidates [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('-z', '-z', [CompletionResultType]::ParameterName, 'Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post may hold line breaks; output lines still end with a line break')
            [CompletionResult]::new('--null-data', '--null-data', [CompletionResultType]::ParameterName, 'Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post may hold line breaks; output lines still end with a line break')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;pack' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'A folder of `<from>-<to>/` model folders [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Keep packs in this folder (one subfolder per model) instead of next to the models')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Verify the existing packs (sources unchanged, every blob''s checksum) without writing; exit 1 if any is missing or bad')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per model on stdout: {"model", "pack", "status", "why", "bytes"}')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;serve' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change')
            [CompletionResult]::new('--pin-from-core', '--pin-from-core', [CompletionResultType]::ParameterName, 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process')
            [CompletionResult]::new('--arithmetic', '--arithmetic', [CompletionResultType]::ParameterName, 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere')
            [CompletionResult]::new('--mkl', '--mkl', [CompletionResultType]::ParameterName, 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Keep packs in this folder (one subfolder per model) instead of next to the models')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Address to listen on (`::` for every IPv6 and IPv4 address)')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'Port to listen on (0: any free port, printed on stderr)')
            [CompletionResult]::new('--max-batch', '--max-batch', [CompletionResultType]::ParameterName, 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest')
            [CompletionResult]::new('--max-texts', '--max-texts', [CompletionResultType]::ParameterName, 'Most texts in one request (413 beyond)')
            [CompletionResult]::new('--max-chars', '--max-chars', [CompletionResultType]::ParameterName, 'Most bytes of text in one request (413 beyond)')
            [CompletionResult]::new('--max-pieces', '--max-pieces', [CompletionResultType]::ParameterName, 'Most source pieces (the first model''s SentencePiece tokens, about what a request costs to translate) of one request''s texts of one source language; 413 beyond. Bytes undercount some scripts: 20,000 bytes of Chinese are 6,666 pieces, of English about 5,000. 0: no limit')
            [CompletionResult]::new('--http-threads', '--http-threads', [CompletionResultType]::ParameterName, 'Requests translating at once; more wait in a queue of --max-queue. Requests over a quarter of MAX_CHARS hold at most three quarters of them, so that light requests are not kept waiting behind heavy ones (whose sentences then take turns with theirs in the engine)')
            [CompletionResult]::new('--max-queue', '--max-queue', [CompletionResultType]::ParameterName, 'Requests waiting for one of the HTTP_THREADS slots; beyond, 503 with Retry-After (429 on DeepL''s routes, which DeepL''s client libraries retry)')
            [CompletionResult]::new('--max-body', '--max-body', [CompletionResultType]::ParameterName, 'Largest request body in bytes; larger ones get 413 before they are read [default: 8 × MAX_CHARS + 64 KiB, room for JSON escapes]')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'Open connections at most. At the cap a new connection is still accepted and the one idle the longest is closed (after its current reply, if it had served requests); only when every open connection has a request in progress is the new one closed at once. Counts are logged once per 10 s')
            [CompletionResult]::new('--admin-port', '--admin-port', [CompletionResultType]::ParameterName, 'A second port that serves only /health, /ready, the heartbeats and /metrics, on connections of its own: probes and scrapers get through whatever floods --port')
            [CompletionResult]::new('--pressure-idle-timeout', '--pressure-idle-timeout', [CompletionResultType]::ParameterName, 'Seconds a connection may stay idle (no request in progress) while three quarters of MAX_CONNECTIONS are open, instead of READ_TIMEOUT: under a flood idle connections make room sooner')
            [CompletionResult]::new('--read-timeout', '--read-timeout', [CompletionResultType]::ParameterName, 'Seconds a client has to send a request''s headers (after which the connection is closed without a reply: no request arrived to answer), then its body (after which it gets 408 and the connection is closed); also how long an idle keep-alive connection stays open')
            [CompletionResult]::new('--drain-seconds', '--drain-seconds', [CompletionResultType]::ParameterName, 'Seconds to finish requests in flight after SIGTERM before exiting anyway (Kubernetes kills after 30 by default)')
            [CompletionResult]::new('--idle-seconds', '--idle-seconds', [CompletionResultType]::ParameterName, 'Seconds after which an unused model''s pages are given back to the kernel (it pages back in on its next request), and after which an idle engine frees its working memory (activations, scores, decoder state); 0 keeps everything resident')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Token every request needs (except /health, /ready, the probes, the web page and LibreTranslate''s /languages, /frontend/settings and /spec, which its clients read without a key), sent as `Authorization: Bearer`, raw `Authorization`, `DeepL-Auth-Key`, `X-API-Token`, `api_key` in the body or `token` in the query. Better given by file (--token-file) or systemd''s credential `translate-token` than in the environment')
            [CompletionResult]::new('--token-file', '--token-file', [CompletionResultType]::ParameterName, 'File holding the token (its surrounding whitespace ignored)')
            [CompletionResult]::new('--log-level', '--log-level', [CompletionResultType]::ParameterName, 'Least severe messages logged: one `info` line per request (route, status, duration, text and byte counts; never the texts), `debug` for more')
            [CompletionResult]::new('--shortlist', '--shortlist', [CompletionResultType]::ParameterName, 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox')
            [CompletionResult]::new('--no-pack', '--no-pack', [CompletionResultType]::ParameterName, 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)')
            [CompletionResult]::new('--preload', '--preload', [CompletionResultType]::ParameterName, 'Load and page in every model at startup; /ready answers 200 once done. Without it models load on first use (and /ready is 200 at once)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'reseam;health' {
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The server''s address, as `serve` reads it')
            [CompletionResult]::new('--port', '--port', [CompletionResultType]::ParameterName, 'The server''s port, as `serve` reads it')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Ask this URL instead of one made from HOST, PORT and --ready')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for the answer')
            [CompletionResult]::new('--ready', '--ready', [CompletionResultType]::ParameterName, 'Ask /ready instead of /health: 503 until the models are loaded and while draining')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'reseam;bench-gemm' {
            [CompletionResult]::new('--isa', '--isa', [CompletionResultType]::ParameterName, 'Kernels to measure: `live` (the ones reseam uses here, see RESEAM_MT_ISA), `all` (every instruction set this CPU runs), or one of reference, avx2, avxvnni, avx512bw, avx512vnni, amx, neon')
            [CompletionResult]::new('--arithmetic', '--arithmetic', [CompletionResultType]::ParameterName, 'Which arithmetic to measure: exact, saturating, or both')
            [CompletionResult]::new('--m', '--m', [CompletionResultType]::ParameterName, 'Rows per product (sentences or tokens in flight), comma-separated')
            [CompletionResult]::new('--dims', '--dims', [CompletionResultType]::ParameterName, 'Translation-model widths whose shapes to measure (tiny 256, base-memory 384, base 512), comma-separated. Default: 256,384,512, or none when --llm is given')
            [CompletionResult]::new('--llm', '--llm', [CompletionResultType]::ParameterName, 'Decoder LLMs whose layer products to measure (llm-qkv, llm-o, llm-gate-up, llm-down, as reseam fuses them), comma-separated; `bench llm` states its prefill against these')
            [CompletionResult]::new('--shape', '--shape', [CompletionResultType]::ParameterName, 'Only these shapes (comma-separated): attn-out (d×d), qkv (d×3d), ffn-up, ffn-down, logits-shortlist (d×1200), logits-full (d×32000); of an LLM, llm-qkv, llm-o, llm-gate-up, llm-down. Default: all')
            [CompletionResult]::new('--min-time', '--min-time', [CompletionResultType]::ParameterName, 'Seconds to spend on each measurement (the best of three runs is kept)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per line (isa, kernel, arithmetic, shape, m, n, k, gmacs, macs_per_cycle, peak_macs_per_cycle, peak_fraction, ...) instead of a table; peaks go to stderr')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;speculate' {
            [CompletionResult]::new('--target', '--target', [CompletionResultType]::ParameterName, 'The target model: a Hugging Face checkpoint folder (config.json, *.safetensors, tokenizer.json or tokenizer.model) of a Llama, Mistral or Qwen2 model')
            [CompletionResult]::new('--draft', '--draft', [CompletionResultType]::ParameterName, 'The draft model, a checkpoint folder like --target; its tokenizer may differ (tokens cross as text, see --strategy). Without it the target runs alone')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or 2,4,6). "auto" picks k every round from the running acceptance rate and the measured pass costs, to maximise the expected speedup; it drafts in every round while drafting is at least as likely to pay as not, and less often the less likely it is (never when it cannot: a draft as dear as the target)')
            [CompletionResult]::new('--k', '--k', [CompletionResultType]::ParameterName, 'Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or 2,4,6). "auto" picks k every round from the running acceptance rate and the measured pass costs, to maximise the expected speedup; it drafts in every round while drafting is at least as likely to pay as not, and less often the less likely it is (never when it cannot: a draft as dear as the target)')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'How draft tokens become target tokens, comma-separated to compare: none (draft ids used as target ids; a control across vocabularies), naive (draft text re-encoded alone), context (re-encoded after the text of the last --prefix committed tokens). When draft and target share one vocabulary, every strategy takes the ids as they are')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Committed target tokens whose text the context strategy puts before the draft text')
            [CompletionResult]::new('--verify', '--verify', [CompletionResultType]::ParameterName, 'How the target checks candidates: batched (all in one pass; its k+1-row arithmetic may flip a near-tie, which the report lists with its logit margin) or exact (one pass per candidate, as plain decoding: output identical to the target alone, slow)')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'When the target alone is timed for the speedups: paired (again right before each configuration''s run of each prompt, so each speedup is against a baseline measured seconds apart and a machine whose speed drifts, e.g. a shared VM or one still warming up, moves both sides alike; about twice the time) or once (before all configurations: faster, but a configuration that never drafted was reported 1.2x faster than the target alone timed cold). Both warm the target and the draft up on the first prompt, untimed, and report every speedup with its 95% interval over the prompts')
            [CompletionResult]::new('--order', '--order', [CompletionResultType]::ParameterName, 'In what order configurations and prompts run: interleaved (each prompt through every configuration in turn, so a slow stretch of a shared machine falls on all of them alike and their speedups can be compared) or grouped (each configuration over all prompts before the next; a stretch of seconds then favours or penalises whole configurations)')
            [CompletionResult]::new('--draft-vocab-corpus', '--draft-vocab-corpus', [CompletionResultType]::ParameterName, 'Text whose tokens, in the draft''s tokenizer, make the draft''s output layer (FR-Spec): the draft computes logits only for the --draft-vocab ids most frequent in FILE (one text per line, e.g. a corpus of the prompts'' language) and its end-of-sequence ids, so a small draft with a large vocabulary (Qwen2.5, Llama 3) passes at a fraction of the cost. The target still verifies in its whole vocabulary: output is unchanged')
            [CompletionResult]::new('--draft-vocab', '--draft-vocab', [CompletionResultType]::ParameterName, 'With --draft-vocab-corpus: how many of the most frequent ids the draft keeps (0: every id that occurs in the corpus)')
            [CompletionResult]::new('--lookbehind', '--lookbehind', [CompletionResultType]::ParameterName, 'Draft tokens the draft''s re-synchronisation may look back for a word start to re-encode the committed text from')
            [CompletionResult]::new('--k-max', '--k-max', [CompletionResultType]::ParameterName, 'The longest draft -k auto may choose')
            [CompletionResult]::new('--divergence-tolerance', '--divergence-tolerance', [CompletionResultType]::ParameterName, 'Largest logit margin (top-1 minus top-2 of the target alone) at which a batched divergence counts as a near-tie rather than a bug')
            [CompletionResult]::new('--csv', '--csv', [CompletionResultType]::ParameterName, 'With --draft: write one row per configuration as CSV to FILE')
            [CompletionResult]::new('--plot', '--plot', [CompletionResultType]::ParameterName, 'With --draft: plot measured and predicted speedup against k, with the break-even line, as SVG to FILE')
            [CompletionResult]::new('--prompts', '--prompts', [CompletionResultType]::ParameterName, 'Prompts: one per line, or JSON Lines with a "prompt" or "instruction" field (pl_alpaca style; an "input" field is appended). "-" reads standard input')
            [CompletionResult]::new('--max-new-tokens', '--max-new-tokens', [CompletionResultType]::ParameterName, 'New tokens per prompt at most (fewer if the model ends its answer)')
            [CompletionResult]::new('--precision', '--precision', [CompletionResultType]::ParameterName, 'Weights: int8 (per-row int8 weights, per-token int8 activations, exact int32 products; packed once and memory-mapped), bf16 (bf16 weights, f32 arithmetic) or f32 (for checking against Transformers)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Write the report as JSON to FILE ("-": standard output), in the schema of docs/speculate-json.md: the baseline (per prompt "prompt", "prompt_ids", "output_ids", "text" and timings) and, with --draft, one run per configuration (acceptance, speedup, cost model, divergences)')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Folder for packed int8 weights (default: the user cache, ~/.cache/reseam/packed)')
            [CompletionResult]::new('--chat', '--chat', [CompletionResultType]::ParameterName, 'Wrap each prompt as the user turn of the model''s chat template, with the assistant turn opened (as apply_chat_template(add_generation_prompt=True))')
            [CompletionResult]::new('--ignore-eos', '--ignore-eos', [CompletionResultType]::ParameterName, 'Do not stop at the model''s end-of-sequence tokens (generation_config.json''s eos_token_id): always make --max-new-tokens tokens')
            [CompletionResult]::new('--no-pack', '--no-pack', [CompletionResultType]::ParameterName, 'Quantize int8 weights in memory on every run instead of packing them to a file once')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;bench' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('memory', 'memory', [CompletionResultType]::ParameterValue, 'Memory read bandwidth: all cores stream a buffer much larger than the caches')
            [CompletionResult]::new('llm', 'llm', [CompletionResultType]::ParameterValue, 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run')
            [CompletionResult]::new('speculate', 'speculate', [CompletionResultType]::ParameterValue, 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k')
            [CompletionResult]::new('translate', 'translate', [CompletionResultType]::ParameterValue, 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;bench;memory' {
            [CompletionResult]::new('--size-mib', '--size-mib', [CompletionResultType]::ParameterName, 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the figures as JSON instead of text')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;bench;llm' {
            [CompletionResult]::new('--shape', '--shape', [CompletionResultType]::ParameterName, 'Model shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)')
            [CompletionResult]::new('--prefill-tokens', '--prefill-tokens', [CompletionResultType]::ParameterName, 'Prompt length of the prefill measurement')
            [CompletionResult]::new('--decode-tokens', '--decode-tokens', [CompletionResultType]::ParameterName, 'Tokens generated one forward each for the decode measurement')
            [CompletionResult]::new('--gemm-rows', '--gemm-rows', [CompletionResultType]::ParameterName, 'Rows (M) of the int8 GEMM throughput measurement: one pass over all of the model''s int8 products (its own weights) at M rows, against which the prefill is stated')
            [CompletionResult]::new('--gemm-min-time', '--gemm-min-time', [CompletionResultType]::ParameterName, 'Seconds of `bench-gemm`''s measurement of each of one layer''s products (its `--min-time`), the third figure the prefill is stated against: one thread, warm bursts, times the threads')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed of the random weights')
            [CompletionResult]::new('--size-mib', '--size-mib', [CompletionResultType]::ParameterName, 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the figures as JSON instead of text')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;bench;speculate' {
            [CompletionResult]::new('--shape', '--shape', [CompletionResultType]::ParameterName, 'Target shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)')
            [CompletionResult]::new('--ratio', '--ratio', [CompletionResultType]::ParameterName, 'The small draft has about 1/RATIO of the target''s layer weights (same vocabulary)')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'Draft lengths, comma-separated')
            [CompletionResult]::new('--k', '--k', [CompletionResultType]::ParameterName, 'Draft lengths, comma-separated')
            [CompletionResult]::new('--prompts', '--prompts', [CompletionResultType]::ParameterName, 'Random prompts decoded per configuration')
            [CompletionResult]::new('--prompt-tokens', '--prompt-tokens', [CompletionResultType]::ParameterName, 'Tokens per random prompt')
            [CompletionResult]::new('--max-new-tokens', '--max-new-tokens', [CompletionResultType]::ParameterName, 'Tokens generated per prompt (more: steadier figures, longer run)')
            [CompletionResult]::new('--precision', '--precision', [CompletionResultType]::ParameterName, 'Weights of the generated models: int8, bf16 or f32')
            [CompletionResult]::new('--tolerance', '--tolerance', [CompletionResultType]::ParameterName, 'Largest relative gap between measured and predicted speedup counted as agreement')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed of the random weights and prompts')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the figures (and both full reports) as JSON instead of the table')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;bench;translate' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change')
            [CompletionResult]::new('--pin-from-core', '--pin-from-core', [CompletionResultType]::ParameterName, 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process')
            [CompletionResult]::new('--arithmetic', '--arithmetic', [CompletionResultType]::ParameterName, 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere')
            [CompletionResult]::new('--mkl', '--mkl', [CompletionResultType]::ParameterName, 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Keep packs in this folder (one subfolder per model) instead of next to the models')
            [CompletionResult]::new('--corpus', '--corpus', [CompletionResultType]::ParameterName, 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Requests of the throughput phase (the corpus is repeated as needed)')
            [CompletionResult]::new('--requests', '--requests', [CompletionResultType]::ParameterName, 'Requests of the throughput phase (the corpus is repeated as needed)')
            [CompletionResult]::new('--clients', '--clients', [CompletionResultType]::ParameterName, 'Concurrent clients, each sending one post and waiting for its translation')
            [CompletionResult]::new('--max-batch', '--max-batch', [CompletionResultType]::ParameterName, 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest')
            [CompletionResult]::new('--latency-requests', '--latency-requests', [CompletionResultType]::ParameterName, 'Requests of the idle-latency phase (one at a time)')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Per request: direction, characters, latency in ms (TSV)')
            [CompletionResult]::new('--shortlist', '--shortlist', [CompletionResultType]::ParameterName, 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox')
            [CompletionResult]::new('--no-pack', '--no-pack', [CompletionResultType]::ParameterName, 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)')
            [CompletionResult]::new('--skip-latency', '--skip-latency', [CompletionResultType]::ParameterName, 'Skip the idle-latency phase')
            [CompletionResult]::new('--preload', '--preload', [CompletionResultType]::ParameterName, 'Load every model before timing (always done: the flag is kept for the seed''s BENCH_PRELOAD=1)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as one JSON object')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'reseam;bench;serve' {
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'The server''s root URL')
            [CompletionResult]::new('--corpus', '--corpus', [CompletionResultType]::ParameterName, 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Requests to send (the corpus is repeated as needed)')
            [CompletionResult]::new('--requests', '--requests', [CompletionResultType]::ParameterName, 'Requests to send (the corpus is repeated as needed)')
            [CompletionResult]::new('--clients', '--clients', [CompletionResultType]::ParameterName, 'Concurrent clients, each on its own connection, sending one request and waiting for it')
            [CompletionResult]::new('--texts', '--texts', [CompletionResultType]::ParameterName, 'Posts per request (consecutive corpus lines of one direction)')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The server''s token, if it needs one')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds a request may take before it counts as failed')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write each corpus line''s translation (`index<TAB>translation`, `\n` escaped), for comparing with `reseam translate`')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as one JSON object')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;bench;models' {
            [CompletionResult]::new('--models', '--models', [CompletionResultType]::ParameterName, 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change')
            [CompletionResult]::new('--pin-from-core', '--pin-from-core', [CompletionResultType]::ParameterName, 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process')
            [CompletionResult]::new('--arithmetic', '--arithmetic', [CompletionResultType]::ParameterName, 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere')
            [CompletionResult]::new('--mkl', '--mkl', [CompletionResultType]::ParameterName, 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine')
            [CompletionResult]::new('--pack-dir', '--pack-dir', [CompletionResultType]::ParameterName, 'Keep packs in this folder (one subfolder per model) instead of next to the models')
            [CompletionResult]::new('--synthetic', '--synthetic', [CompletionResultType]::ParameterName, 'First write random-weight models of these architectures (model i gets the i-th, in turn) in Mozilla''s int8 format with 32,000-piece vocabularies and shortlists, under the pair names es-en, en-es, fr-en, en-fr, ...')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'How many synthetic models')
            [CompletionResult]::new('--synthetic-dir', '--synthetic-dir', [CompletionResultType]::ParameterName, 'Where to write the synthetic models, kept after the run (default: a temporary folder, removed at the end). Files already holding the bytes they would get are left alone')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed of the synthetic weights, vocabularies and shortlists')
            [CompletionResult]::new('--sentence', '--sentence', [CompletionResultType]::ParameterName, 'The sentence every model translates')
            [CompletionResult]::new('--phase', '--phase', [CompletionResultType]::ParameterName, 'Run one measured phase in this process and print its JSON (what the parent runs)')
            [CompletionResult]::new('--shortlist', '--shortlist', [CompletionResultType]::ParameterName, 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox')
            [CompletionResult]::new('--no-pack', '--no-pack', [CompletionResultType]::ParameterName, 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)')
            [CompletionResult]::new('--skip-cold', '--skip-cold', [CompletionResultType]::ParameterName, 'Skip the cold-cache load')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the figures as one JSON object')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'reseam;bench;help' {
            [CompletionResult]::new('memory', 'memory', [CompletionResultType]::ParameterValue, 'Memory read bandwidth: all cores stream a buffer much larger than the caches')
            [CompletionResult]::new('llm', 'llm', [CompletionResultType]::ParameterValue, 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run')
            [CompletionResult]::new('speculate', 'speculate', [CompletionResultType]::ParameterValue, 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k')
            [CompletionResult]::new('translate', 'translate', [CompletionResultType]::ParameterValue, 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;bench;help;memory' {
            break
        }
        'reseam;bench;help;llm' {
            break
        }
        'reseam;bench;help;speculate' {
            break
        }
        'reseam;bench;help;translate' {
            break
        }
        'reseam;bench;help;serve' {
            break
        }
        'reseam;bench;help;models' {
            break
        }
        'reseam;bench;help;help' {
            break
        }
        'reseam;generate' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Man pages (reseam.1 and one per subcommand) into DIR')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;generate;man' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;generate;completions' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (with --version: kernels and CPU features)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'reseam;generate;help' {
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Man pages (reseam.1 and one per subcommand) into DIR')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;generate;help;man' {
            break
        }
        'reseam;generate;help;completions' {
            break
        }
        'reseam;generate;help;help' {
            break
        }
        'reseam;help' {
            [CompletionResult]::new('fetch', 'fetch', [CompletionResultType]::ParameterValue, 'Downloads Firefox Translations models (verified) into the models folder')
            [CompletionResult]::new('translate', 'translate', [CompletionResultType]::ParameterValue, 'Translates text from standard input to standard output, line by line')
            [CompletionResult]::new('detect', 'detect', [CompletionResultType]::ParameterValue, 'Identifies the language of each input line: `language<TAB>confidence`')
            [CompletionResult]::new('pack', 'pack', [CompletionResultType]::ParameterValue, 'Packs translation models into memory-mappable files (`model.reseam`), or checks them')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs')
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr')
            [CompletionResult]::new('bench-gemm', 'bench-gemm', [CompletionResultType]::ParameterValue, 'Measures the int8 matrix products per instruction set against the CPU''s peak')
            [CompletionResult]::new('speculate', 'speculate', [CompletionResultType]::ParameterValue, 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)')
            [CompletionResult]::new('bench', 'bench', [CompletionResultType]::ParameterValue, 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Writes the man page or shell completions (for packagers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reseam;help;fetch' {
            break
        }
        'reseam;help;translate' {
            break
        }
        'reseam;help;detect' {
            break
        }
        'reseam;help;pack' {
            break
        }
        'reseam;help;serve' {
            break
        }
        'reseam;help;health' {
            break
        }
        'reseam;help;bench-gemm' {
            break
        }
        'reseam;help;speculate' {
            break
        }
        'reseam;help;bench' {
            [CompletionResult]::new('memory', 'memory', [CompletionResultType]::ParameterValue, 'Memory read bandwidth: all cores stream a buffer much larger than the caches')
            [CompletionResult]::new('llm', 'llm', [CompletionResultType]::ParameterValue, 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run')
            [CompletionResult]::new('speculate', 'speculate', [CompletionResultType]::ParameterValue, 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k')
            [CompletionResult]::new('translate', 'translate', [CompletionResultType]::ParameterValue, 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model')
            break
        }
        'reseam;help;bench;memory' {
            break
        }
        'reseam;help;bench;llm' {
            break
        }
        'reseam;help;bench;speculate' {
            break
        }
        'reseam;help;bench;translate' {
            break
        }
        'reseam;help;bench;serve' {
            break
        }
        'reseam;help;bench;models' {
            break
        }
        'reseam;help;generate' {
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Man pages (reseam.1 and one per subcommand) into DIR')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR')
            break
        }
        'reseam;help;generate;man' {
            break
        }
        'reseam;help;generate;completions' {
            break
        }
        'reseam;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
