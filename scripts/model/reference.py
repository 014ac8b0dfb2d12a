"""Recomputes test/fixtures/model/reference.json: the installed model's vectors for its texts, by a
pipeline independent of Stacks' Node.js one (Hugging Face tokenizers and onnxruntime in Python).

    python scripts/model/reference.py data/models/all-MiniLM-L6-v2 test/fixtures/model/reference.json

Needs tokenizers, onnxruntime and numpy (a scratch venv: pip install tokenizers onnxruntime==1.32.0
numpy). The texts already in the file are kept; their token counts and vectors are written again.
Run it when the model or the session settings of server/embed/model-worker.ts change: the same
setting is applied here, so both pipelines compute the same thing.
"""
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# As server/embed/model-worker.ts: the residual additions are not fused into SkipLayerNormalization.
SESSION_CONFIG = {"optimization.disable_specified_optimizers": "SkipLayerNormFusion"}


def main() -> None:
    model_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    reference = json.loads(out.read_text())
    # The cut the server applies (the pin's maxTokens, copied into the model folder's manifest).
    max_tokens = json.loads((model_dir / "manifest.json").read_text())["maxTokens"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # The file pads and cuts at 128 for sentence-transformers; Stacks cuts at maxTokens and never pads.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    for key, value in SESSION_CONFIG.items():
        options.add_session_config_entry(key, value)
    session = ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
    tokens, vectors = [], []
    for text in reference["texts"]:
        ids = tokenizer.encode(text).ids
        if len(ids) > max_tokens:
            ids = ids[:max_tokens]
            ids[-1] = tokenizer.token_to_id("[SEP]")
        feed = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=np.int64)}
        tokens.append(len(ids))
        vectors.append([round(float(x), 6) for x in session.run(None, feed)[0][0]])
    reference.update(tokens=tokens, vectors=vectors)
    out.write_text(json.dumps(reference) + "\n")


if __name__ == "__main__":
    main()
