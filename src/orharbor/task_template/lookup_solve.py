"""Answer each known instance with a stored solution (oracle and baseline programs)."""
import hashlib
import json
import sys

SOLUTIONS = json.loads($solutions_json)


def main(instance_path: str, solution_path: str) -> None:
    with open(instance_path, encoding="utf-8") as f:
        instance = json.load(f)
    key = hashlib.sha256(
        json.dumps(instance, sort_keys=True, separators=(",", ":")).encode("ascii")
    ).hexdigest()
    with open(solution_path, "w", encoding="utf-8") as f:
        json.dump(SOLUTIONS[key], f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
