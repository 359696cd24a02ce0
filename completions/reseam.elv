
use builtin;
use str;

set edit:completion:arg-completer[reseam] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'reseam'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'reseam'= {
            cand -V 'Print the version (with --verbose: the CPU, the kernels in use and the arithmetic)'
            cand --version 'Print the version (with --verbose: the CPU, the kernels in use and the arithmetic)'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand fetch 'Downloads Firefox Translations models (verified) into the models folder'
            cand translate 'Translates text from standard input to standard output, line by line'
            cand detect 'Identifies the language of each input line: `language<TAB>confidence`'
            cand pack 'Packs translation models into memory-mappable files (`model.reseam`), or checks them'
            cand serve 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs'
            cand health 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr'
            cand bench-gemm 'Measures the int8 matrix products per instruction set against the CPU''s peak'
            cand speculate 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)'
            cand bench 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it'
            cand generate 'Writes the man page or shell completions (for packagers)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;fetch'= {
            cand --models 'The models folder: one `<from>-<to>/` folder per pair, with Firefox''s file names [default: the user data directory''s reseam/models]'
            cand --source 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)'
            cand --channel 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)'
            cand --retries 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going'
            cand --timeout 'Seconds to wait for a connection, an answer, or the next bytes of a download'
            cand --mirror 'Write the records and compressed files LANGS needs into DIR, in the server''s layout, instead of installing them; then use `--source DIR` elsewhere'
            cand --allow-prerelease 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly'
            cand --list 'Print the pairs the source offers (architecture, version, download size) and which are installed, instead of fetching'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;translate'= {
            cand --models 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand --threads 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change'
            cand --pin-from-core 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process'
            cand --arithmetic 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere'
            cand --mkl 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine'
            cand --pack-dir 'Keep packs in this folder (one subfolder per model) instead of next to the models'
            cand --model 'The model file to use when the folder holds several (by default the int8 `model.*.intgemm.alphas.bin`, as Firefox). A name inside the folder or a path'
            cand --batch 'Most sentences translated together on each compute thread, as a Bergamot worker''s batch (larger is faster; the output does not change)'
            cand --languages 'With FROM `auto`: the candidate languages, comma-separated (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox''s languages when none is installed, as `reseam detect`]'
            cand --source 'Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a folder written by --mirror (for machines without internet)'
            cand --channel 'Firefox release channel whose choice to follow (record filters pick alpha and beta models for nightly and beta)'
            cand --retries 'Retries after a network error, a timeout or a server error (5xx), waiting longer each time; a download that makes progress keeps going'
            cand --timeout 'Seconds to wait for a connection, an answer, or the next bytes of a download'
            cand --shortlist 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
            cand --no-pack 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
            cand --debug 'Print every layer''s values to stderr in the format of Marian''s debug() messages, to compare with Marian layer by layer'
            cand --raw 'Leave links, e-mail addresses, emoji and @mentions to the model instead of keeping them out and putting them back; sentence splitting and spacing stay. For comparing the engine line for line with other engines'
            cand --no-split 'Translate each line as one sentence instead of splitting it into sentences first, as Marian and Bergamot (`ssplit-mode: sentence`) read their input. Lines longer than the model''s limit are still cut'
            cand --offline 'Never download: fail if the pair (or its route through English) is not in the models folder. Without it a missing pair is fetched first, as `reseam fetch FROM-TO` would'
            cand --jsonl 'Read and write JSON Lines: one object per line with a string `text` (one post, which may hold line breaks as `\n`) and optional `from`, `to` (override FROM and TO) and `id` or any other fields. Each object comes back as it was, with `translation` added (and `detected`, `{"language", "confidence"}`, when the source is `auto`); a record that cannot be translated gets `error` instead, and the run goes on'
            cand --html 'Read each line (record) as HTML: its text is translated and every tag, attribute, comment and entity kept byte for byte; `script`, `style`, `code`, `pre`, `translate="no"`, and links, mentions and hashtags in `<a>` (as Mastodon writes them) are not translated. Block tags (`p`, `br`, `li`...) end sentences; inline ones (`b`, `em`, `a`, `span`...) do not and are placed on the translated words, by the decoder''s alignment, as Firefox does'
            cand -z 'Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`), so that a post may hold line breaks; each translation is written followed by a NUL'
            cand --null-data 'Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`), so that a post may hold line breaks; each translation is written followed by a NUL'
            cand --allow-prerelease 'Also take alpha and beta models (as Firefox nightly does); same as --channel nightly'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'reseam;detect'= {
            cand --languages 'The candidate languages, comma-separated Firefox tags (`es,de,zh-Hant`) [default: the languages of the models installed in the models folder, or all of Firefox''s languages when none is installed]. Fewer candidates give more accurate and faster answers'
            cand --models 'The models folder whose installed languages are the default candidates [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand -z 'Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post may hold line breaks; output lines still end with a line break'
            cand --null-data 'Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post may hold line breaks; output lines still end with a line break'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;pack'= {
            cand --models 'A folder of `<from>-<to>/` model folders [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand --pack-dir 'Keep packs in this folder (one subfolder per model) instead of next to the models'
            cand --check 'Verify the existing packs (sources unchanged, every blob''s checksum) without writing; exit 1 if any is missing or bad'
            cand --json 'One JSON object per model on stdout: {"model", "pack", "status", "why", "bytes"}'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;serve'= {
            cand --models 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand --threads 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change'
            cand --pin-from-core 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process'
            cand --arithmetic 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere'
            cand --mkl 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine'
            cand --pack-dir 'Keep packs in this folder (one subfolder per model) instead of next to the models'
            cand --host 'Address to listen on (`::` for every IPv6 and IPv4 address)'
            cand --port 'Port to listen on (0: any free port, printed on stderr)'
            cand --max-batch 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest'
            cand --max-texts 'Most texts in one request (413 beyond)'
            cand --max-chars 'Most bytes of text in one request (413 beyond)'
            cand --max-pieces 'Most source pieces (the first model''s SentencePiece tokens, about what a request costs to translate) of one request''s texts of one source language; 413 beyond. Bytes undercount some scripts: 20,000 bytes of Chinese are 6,666 pieces, of English about 5,000. 0: no limit'
            cand --http-threads 'Requests translating at once; more wait in a queue of --max-queue. Requests over a quarter of MAX_CHARS hold at most three quarters of them, so that light requests are not kept waiting behind heavy ones (whose sentences then take turns with theirs in the engine)'
            cand --max-queue 'Requests waiting for one of the HTTP_THREADS slots; beyond, 503 with Retry-After (429 on DeepL''s routes, which DeepL''s client libraries retry)'
            cand --max-body 'Largest request body in bytes; larger ones get 413 before they are read [default: 8 × MAX_CHARS + 64 KiB, room for JSON escapes]'
            cand --max-connections 'Open connections at most. At the cap a new connection is still accepted and the one idle the longest is closed (after its current reply, if it had served requests); only when every open connection has a request in progress is the new one closed at once. Counts are logged once per 10 s'
            cand --admin-port 'A second port that serves only /health, /ready, the heartbeats and /metrics, on connections of its own: probes and scrapers get through whatever floods --port'
            cand --pressure-idle-timeout 'Seconds a connection may stay idle (no request in progress) while three quarters of MAX_CONNECTIONS are open, instead of READ_TIMEOUT: under a flood idle connections make room sooner'
            cand --read-timeout 'Seconds a client has to send a request''s headers (after which the connection is closed without a reply: no request arrived to answer), then its body (after which it gets 408 and the connection is closed); also how long an idle keep-alive connection stays open'
            cand --drain-seconds 'Seconds to finish requests in flight after SIGTERM before exiting anyway (Kubernetes kills after 30 by default)'
            cand --idle-seconds 'Seconds after which an unused model''s pages are given back to the kernel (it pages back in on its next request), and after which an idle engine frees its working memory (activations, scores, decoder state); 0 keeps everything resident'
            cand --token 'Token every request needs (except /health, /ready, the probes, the web page and LibreTranslate''s /languages, /frontend/settings and /spec, which its clients read without a key), sent as `Authorization: Bearer`, raw `Authorization`, `DeepL-Auth-Key`, `X-API-Token`, `api_key` in the body or `token` in the query. Better given by file (--token-file) or systemd''s credential `translate-token` than in the environment'
            cand --token-file 'File holding the token (its surrounding whitespace ignored)'
            cand --log-level 'Least severe messages logged: one `info` line per request (route, status, duration, text and byte counts; never the texts), `debug` for more'
            cand --shortlist 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
            cand --no-pack 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
            cand --preload 'Load and page in every model at startup; /ready answers 200 once done. Without it models load on first use (and /ready is 200 at once)'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'reseam;health'= {
            cand --host 'The server''s address, as `serve` reads it'
            cand --port 'The server''s port, as `serve` reads it'
            cand --url 'Ask this URL instead of one made from HOST, PORT and --ready'
            cand --timeout 'Seconds to wait for the answer'
            cand --ready 'Ask /ready instead of /health: 503 until the models are loaded and while draining'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'reseam;bench-gemm'= {
            cand --isa 'Kernels to measure: `live` (the ones reseam uses here, see RESEAM_MT_ISA), `all` (every instruction set this CPU runs), or one of reference, avx2, avxvnni, avx512bw, avx512vnni, amx, neon'
            cand --arithmetic 'Which arithmetic to measure: exact, saturating, or both'
            cand --m 'Rows per product (sentences or tokens in flight), comma-separated'
            cand --dims 'Translation-model widths whose shapes to measure (tiny 256, base-memory 384, base 512), comma-separated. Default: 256,384,512, or none when --llm is given'
            cand --llm 'Decoder LLMs whose layer products to measure (llm-qkv, llm-o, llm-gate-up, llm-down, as reseam fuses them), comma-separated; `bench llm` states its prefill against these'
            cand --shape 'Only these shapes (comma-separated): attn-out (d×d), qkv (d×3d), ffn-up, ffn-down, logits-shortlist (d×1200), logits-full (d×32000); of an LLM, llm-qkv, llm-o, llm-gate-up, llm-down. Default: all'
            cand --min-time 'Seconds to spend on each measurement (the best of three runs is kept)'
            cand --json 'One JSON object per line (isa, kernel, arithmetic, shape, m, n, k, gmacs, macs_per_cycle, peak_macs_per_cycle, peak_fraction, ...) instead of a table; peaks go to stderr'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;speculate'= {
            cand --target 'The target model: a Hugging Face checkpoint folder (config.json, *.safetensors, tokenizer.json or tokenizer.model) of a Llama, Mistral or Qwen2 model'
            cand --draft 'The draft model, a checkpoint folder like --target; its tokenizer may differ (tokens cross as text, see --strategy). Without it the target runs alone'
            cand -k 'Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or 2,4,6). "auto" picks k every round from the running acceptance rate and the measured pass costs, to maximise the expected speedup; it drafts in every round while drafting is at least as likely to pay as not, and less often the less likely it is (never when it cannot: a draft as dear as the target)'
            cand --k 'Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or 2,4,6). "auto" picks k every round from the running acceptance rate and the measured pass costs, to maximise the expected speedup; it drafts in every round while drafting is at least as likely to pay as not, and less often the less likely it is (never when it cannot: a draft as dear as the target)'
            cand --strategy 'How draft tokens become target tokens, comma-separated to compare: none (draft ids used as target ids; a control across vocabularies), naive (draft text re-encoded alone), context (re-encoded after the text of the last --prefix committed tokens). When draft and target share one vocabulary, every strategy takes the ids as they are'
            cand --prefix 'Committed target tokens whose text the context strategy puts before the draft text'
            cand --verify 'How the target checks candidates: batched (all in one pass; its k+1-row arithmetic may flip a near-tie, which the report lists with its logit margin) or exact (one pass per candidate, as plain decoding: output identical to the target alone, slow)'
            cand --baseline 'When the target alone is timed for the speedups: paired (again right before each configuration''s run of each prompt, so each speedup is against a baseline measured seconds apart and a machine whose speed drifts, e.g. a shared VM or one still warming up, moves both sides alike; about twice the time) or once (before all configurations: faster, but a configuration that never drafted was reported 1.2x faster than the target alone timed cold). Both warm the target and the draft up on the first prompt, untimed, and report every speedup with its 95% interval over the prompts'
            cand --order 'In what order configurations and prompts run: interleaved (each prompt through every configuration in turn, so a slow stretch of a shared machine falls on all of them alike and their speedups can be compared) or grouped (each configuration over all prompts before the next; a stretch of seconds then favours or penalises whole configurations)'
            cand --draft-vocab-corpus 'Text whose tokens, in the draft''s tokenizer, make the draft''s output layer (FR-Spec): the draft computes logits only for the --draft-vocab ids most frequent in FILE (one text per line, e.g. a corpus of the prompts'' language) and its end-of-sequence ids, so a small draft with a large vocabulary (Qwen2.5, Llama 3) passes at a fraction of the cost. The target still verifies in its whole vocabulary: output is unchanged'
            cand --draft-vocab 'With --draft-vocab-corpus: how many of the most frequent ids the draft keeps (0: every id that occurs in the corpus)'
            cand --lookbehind 'Draft tokens the draft''s re-synchronisation may look back for a word start to re-encode the committed text from'
            cand --k-max 'The longest draft -k auto may choose'
            cand --divergence-tolerance 'Largest logit margin (top-1 minus top-2 of the target alone) at which a batched divergence counts as a near-tie rather than a bug'
            cand --csv 'With --draft: write one row per configuration as CSV to FILE'
            cand --plot 'With --draft: plot measured and predicted speedup against k, with the break-even line, as SVG to FILE'
            cand --prompts 'Prompts: one per line, or JSON Lines with a "prompt" or "instruction" field (pl_alpaca style; an "input" field is appended). "-" reads standard input'
            cand --max-new-tokens 'New tokens per prompt at most (fewer if the model ends its answer)'
            cand --precision 'Weights: int8 (per-row int8 weights, per-token int8 activations, exact int32 products; packed once and memory-mapped), bf16 (bf16 weights, f32 arithmetic) or f32 (for checking against Transformers)'
            cand --json 'Write the report as JSON to FILE ("-": standard output), in the schema of docs/speculate-json.md: the baseline (per prompt "prompt", "prompt_ids", "output_ids", "text" and timings) and, with --draft, one run per configuration (acceptance, speedup, cost model, divergences)'
            cand --pack-dir 'Folder for packed int8 weights (default: the user cache, ~/.cache/reseam/packed)'
            cand --chat 'Wrap each prompt as the user turn of the model''s chat template, with the assistant turn opened (as apply_chat_template(add_generation_prompt=True))'
            cand --ignore-eos 'Do not stop at the model''s end-of-sequence tokens (generation_config.json''s eos_token_id): always make --max-new-tokens tokens'
            cand --no-pack 'Quantize int8 weights in memory on every run instead of packing them to a file once'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;bench'= {
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand memory 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
            cand llm 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
            cand speculate 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
            cand translate 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory'
            cand serve 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics'
            cand models 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;bench;memory'= {
            cand --size-mib 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)'
            cand --json 'Print the figures as JSON instead of text'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;bench;llm'= {
            cand --shape 'Model shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)'
            cand --prefill-tokens 'Prompt length of the prefill measurement'
            cand --decode-tokens 'Tokens generated one forward each for the decode measurement'
            cand --gemm-rows 'Rows (M) of the int8 GEMM throughput measurement: one pass over all of the model''s int8 products (its own weights) at M rows, against which the prefill is stated'
            cand --gemm-min-time 'Seconds of `bench-gemm`''s measurement of each of one layer''s products (its `--min-time`), the third figure the prefill is stated against: one thread, warm bursts, times the threads'
            cand --seed 'Seed of the random weights'
            cand --size-mib 'Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache)'
            cand --json 'Print the figures as JSON instead of text'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;bench;speculate'= {
            cand --shape 'Target shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check)'
            cand --ratio 'The small draft has about 1/RATIO of the target''s layer weights (same vocabulary)'
            cand -k 'Draft lengths, comma-separated'
            cand --k 'Draft lengths, comma-separated'
            cand --prompts 'Random prompts decoded per configuration'
            cand --prompt-tokens 'Tokens per random prompt'
            cand --max-new-tokens 'Tokens generated per prompt (more: steadier figures, longer run)'
            cand --precision 'Weights of the generated models: int8, bf16 or f32'
            cand --tolerance 'Largest relative gap between measured and predicted speedup counted as agreement'
            cand --seed 'Seed of the random weights and prompts'
            cand --json 'Print the figures (and both full reports) as JSON instead of the table'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;bench;translate'= {
            cand --models 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand --threads 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change'
            cand --pin-from-core 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process'
            cand --arithmetic 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere'
            cand --mkl 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine'
            cand --pack-dir 'Keep packs in this folder (one subfolder per model) instead of next to the models'
            cand --corpus 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break)'
            cand -n 'Requests of the throughput phase (the corpus is repeated as needed)'
            cand --requests 'Requests of the throughput phase (the corpus is repeated as needed)'
            cand --clients 'Concurrent clients, each sending one post and waiting for its translation'
            cand --max-batch 'Most sentences of one model decoded together in one step of one compute thread (with THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them are kept for light requests (a few sentences), which then start at once while heavy ones fill the rest'
            cand --latency-requests 'Requests of the idle-latency phase (one at a time)'
            cand --out 'Per request: direction, characters, latency in ms (TSV)'
            cand --shortlist 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
            cand --no-pack 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
            cand --skip-latency 'Skip the idle-latency phase'
            cand --preload 'Load every model before timing (always done: the flag is kept for the seed''s BENCH_PRELOAD=1)'
            cand --json 'Print the summary as one JSON object'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'reseam;bench;serve'= {
            cand --url 'The server''s root URL'
            cand --corpus 'Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break)'
            cand -n 'Requests to send (the corpus is repeated as needed)'
            cand --requests 'Requests to send (the corpus is repeated as needed)'
            cand --clients 'Concurrent clients, each on its own connection, sending one request and waiting for it'
            cand --texts 'Posts per request (consecutive corpus lines of one direction)'
            cand --token 'The server''s token, if it needs one'
            cand --timeout 'Seconds a request may take before it counts as failed'
            cand --out 'Write each corpus line''s translation (`index<TAB>translation`, `\n` escaped), for comparing with `reseam translate`'
            cand --json 'Print the summary as one JSON object'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;bench;models'= {
            cand --models 'A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes them) [default: the user data directory''s reseam/models, e.g. ~/.local/share/reseam/models]'
            cand --threads 'Compute threads (default: one per physical core). The sentences of every input line, request and language pair share them; the output does not change'
            cand --pin-from-core 'Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of another process'
            cand --arithmetic 'Integer arithmetic of the int8 products. Firefox''s results depend on the CPU: `auto` matches Firefox on this machine, `exact` gives the same output everywhere'
            cand --mkl 'Summation orders of the float attention products. Firefox''s engine sums them with Intel''s MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties): `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine'
            cand --pack-dir 'Keep packs in this folder (one subfolder per model) instead of next to the models'
            cand --synthetic 'First write random-weight models of these architectures (model i gets the i-th, in turn) in Mozilla''s int8 format with 32,000-piece vocabularies and shortlists, under the pair names es-en, en-es, fr-en, en-fr, ...'
            cand --count 'How many synthetic models'
            cand --synthetic-dir 'Where to write the synthetic models, kept after the run (default: a temporary folder, removed at the end). Files already holding the bytes they would get are left alone'
            cand --seed 'Seed of the synthetic weights, vocabularies and shortlists'
            cand --sentence 'The sentence every model translates'
            cand --phase 'Run one measured phase in this process and print its JSON (what the parent runs)'
            cand --shortlist 'Restrict each sentence''s output words to the model''s lexical shortlist (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox'
            cand --no-pack 'Read the model files into memory at every start instead of mapping their pack (`model.reseam`, written on first use next to the model, or in ~/.cache/reseam/packed when the model folder is read-only)'
            cand --skip-cold 'Skip the cold-cache load'
            cand --json 'Print the figures as one JSON object'
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'reseam;bench;help'= {
            cand memory 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
            cand llm 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
            cand speculate 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
            cand translate 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory'
            cand serve 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics'
            cand models 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;bench;help;memory'= {
        }
        &'reseam;bench;help;llm'= {
        }
        &'reseam;bench;help;speculate'= {
        }
        &'reseam;bench;help;translate'= {
        }
        &'reseam;bench;help;serve'= {
        }
        &'reseam;bench;help;models'= {
        }
        &'reseam;bench;help;help'= {
        }
        &'reseam;generate'= {
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand man 'Man pages (reseam.1 and one per subcommand) into DIR'
            cand completions 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;generate;man'= {
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;generate;completions'= {
            cand -v 'More detail (with --version: kernels and CPU features)'
            cand --verbose 'More detail (with --version: kernels and CPU features)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'reseam;generate;help'= {
            cand man 'Man pages (reseam.1 and one per subcommand) into DIR'
            cand completions 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;generate;help;man'= {
        }
        &'reseam;generate;help;completions'= {
        }
        &'reseam;generate;help;help'= {
        }
        &'reseam;help'= {
            cand fetch 'Downloads Firefox Translations models (verified) into the models folder'
            cand translate 'Translates text from standard input to standard output, line by line'
            cand detect 'Identifies the language of each input line: `language<TAB>confidence`'
            cand pack 'Packs translation models into memory-mappable files (`model.reseam`), or checks them'
            cand serve 'Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX, MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs'
            cand health 'Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr'
            cand bench-gemm 'Measures the int8 matrix products per instruction set against the CPU''s peak'
            cand speculate 'Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured against the target alone (without --draft: the target alone, with its prefill and decode speed)'
            cand bench 'Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it'
            cand generate 'Writes the man page or shell completions (for packagers)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'reseam;help;fetch'= {
        }
        &'reseam;help;translate'= {
        }
        &'reseam;help;detect'= {
        }
        &'reseam;help;pack'= {
        }
        &'reseam;help;serve'= {
        }
        &'reseam;help;health'= {
        }
        &'reseam;help;bench-gemm'= {
        }
        &'reseam;help;speculate'= {
        }
        &'reseam;help;bench'= {
            cand memory 'Memory read bandwidth: all cores stream a buffer much larger than the caches'
            cand llm 'int8 decode and prefill of a random-weight model at a real shape (made in memory), against the memory bandwidth and the int8 GEMM throughput measured in the same run'
            cand speculate 'The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by default) with two drafts of its vocabulary, itself and a ~10x smaller random model; measured speedup against the prediction from the measured acceptance and c, per k'
            cand translate 'The translation service''s benchmark: posts of a corpus through one shared engine from many concurrent clients (posts/s, latency under load), then one post at a time on the idle engine, with the process''s memory'
            cand serve 'A running server over HTTP (`reseam serve`, or any server of the seed''s API): many concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures, and the server''s memory from its /metrics'
            cand models 'Every model of a folder (or synthetic ones at Firefox''s sizes) through the registry: load time with a warm and a cold page cache, memory with every model used once and with every model idle, and the first translation of an idle model'
        }
        &'reseam;help;bench;memory'= {
        }
        &'reseam;help;bench;llm'= {
        }
        &'reseam;help;bench;speculate'= {
        }
        &'reseam;help;bench;translate'= {
        }
        &'reseam;help;bench;serve'= {
        }
        &'reseam;help;bench;models'= {
        }
        &'reseam;help;generate'= {
            cand man 'Man pages (reseam.1 and one per subcommand) into DIR'
            cand completions 'Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR'
        }
        &'reseam;help;generate;man'= {
        }
        &'reseam;help;generate;completions'= {
        }
        &'reseam;help;help'= {
        }
    ]
    $completions[$command]
}
