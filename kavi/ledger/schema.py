"""Ledger schema and its ordered migrations; the version applied is recorded in `schema_version`."""

from collections.abc import Sequence

# Tables that grow with every attempt, as migration 3 leaves them: the same columns, no key and no index.
_UNINDEXED: tuple[tuple[str, str], ...] = (
    ("artifacts", "sha256 VARCHAR NOT NULL, kind VARCHAR NOT NULL, size BIGINT NOT NULL, path VARCHAR NOT NULL, "
                  "created_at TIMESTAMPTZ NOT NULL"),
    ("lineage", "parent_sha256 VARCHAR NOT NULL, child_sha256 VARCHAR NOT NULL, relation VARCHAR NOT NULL, "
                "build_id VARCHAR, proposal_name VARCHAR, created_at TIMESTAMPTZ NOT NULL, child_kind VARCHAR, "
                "child_size BIGINT"),
    ("build_artifacts", "build_id VARCHAR NOT NULL, role VARCHAR NOT NULL, sha256 VARCHAR NOT NULL"),
    ("gate_results", "build_id VARCHAR NOT NULL, gate VARCHAR NOT NULL, verdict VARCHAR NOT NULL, "
                     "effective_verdict VARCHAR NOT NULL, reason VARCHAR NOT NULL, duration_ms DOUBLE NOT NULL, "
                     "messages_json VARCHAR NOT NULL, details_json VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL"),
    ("research_notes", "build_id VARCHAR NOT NULL, proposal_name VARCHAR NOT NULL, attempt_number INTEGER NOT NULL, "
                       "failure_kind VARCHAR NOT NULL, fingerprint VARCHAR NOT NULL, facts_json VARCHAR NOT NULL, "
                       "triggers_json VARCHAR NOT NULL, advice VARCHAR, escalated BOOLEAN NOT NULL, "
                       "note_sha256 VARCHAR, created_at TIMESTAMPTZ NOT NULL"),
    ("model_outcomes", "build_id VARCHAR NOT NULL, proposal_name VARCHAR NOT NULL, model VARCHAR NOT NULL, "
                       "task_type VARCHAR NOT NULL, success BOOLEAN NOT NULL, failure_kind VARCHAR, latency_ms DOUBLE, "
                       "tokens INTEGER, cost_usd DOUBLE, created_at TIMESTAMPTZ NOT NULL"),
    ("builds", "build_id VARCHAR NOT NULL, proposal_name VARCHAR NOT NULL, attempt_number INTEGER NOT NULL, "
               "parent_build_id VARCHAR, run_id VARCHAR, model VARCHAR, endpoint VARCHAR, packet_sha256 VARCHAR, "
               "status VARCHAR NOT NULL, failure_kind VARCHAR, prompt_tokens INTEGER, completion_tokens INTEGER, "
               "latency_ms DOUBLE, cost_usd DOUBLE, skill_sha256 VARCHAR, test_sha256 VARCHAR, "
               "started_at TIMESTAMPTZ NOT NULL, finished_at TIMESTAMPTZ"),
)

# `proposals` and `promotions` as migration 5 leaves them: the same columns in the same order, no key.
_PROPOSALS_V5 = (
    "name VARCHAR NOT NULL, spec_json VARCHAR NOT NULL, spec_sha256 VARCHAR NOT NULL, side_effect_class VARCHAR "
    "NOT NULL, complexity DOUBLE, status VARCHAR NOT NULL, source_path VARCHAR, created_at TIMESTAMPTZ NOT NULL, "
    "updated_at TIMESTAMPTZ NOT NULL, attempts INTEGER DEFAULT 0, latest_build_id VARCHAR, latest_model VARCHAR, "
    "latest_failure_kind VARCHAR, latest_build_status VARCHAR"
)
_PROMOTIONS_V5 = (
    "seq INTEGER NOT NULL, proposal_name VARCHAR NOT NULL, build_id VARCHAR NOT NULL, from_status VARCHAR NOT NULL, "
    "to_status VARCHAR NOT NULL, approved_by VARCHAR NOT NULL, source_sha256 VARCHAR NOT NULL, test_sha256 VARCHAR, "
    "skill_path VARCHAR NOT NULL, prev_hash VARCHAR NOT NULL, record_hash VARCHAR NOT NULL, "
    "created_at TIMESTAMPTZ NOT NULL"
)

# Each proposal's latest build, and the proposal columns that mirror it (migration 4; bulk seeding of a ledger
# applies the same statement).
LATEST_BUILDS = (
    "SELECT proposal_name, attempt_number, build_id, model, failure_kind, status FROM builds "
    "QUALIFY row_number() OVER (PARTITION BY proposal_name ORDER BY attempt_number DESC) = 1"
)
LATEST_BUILD_SET = (
    "attempts = b.attempt_number, latest_build_id = b.build_id, latest_model = b.model, "
    "latest_failure_kind = b.failure_kind, latest_build_status = b.status"
)

# Each migration is (version, statements). Never edit a released migration: append a new one.
MIGRATIONS: Sequence[tuple[int, Sequence[str]]] = (
    (
        1,
        (
            """CREATE TABLE IF NOT EXISTS proposals (
                name VARCHAR PRIMARY KEY,
                spec_json VARCHAR NOT NULL,
                spec_sha256 VARCHAR NOT NULL,
                side_effect_class VARCHAR NOT NULL,
                complexity DOUBLE,
                status VARCHAR NOT NULL,
                source_path VARCHAR,
                created_at TIMESTAMPTZ NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS status_events (
                proposal_name VARCHAR NOT NULL,
                from_status VARCHAR,
                to_status VARCHAR NOT NULL,
                build_id VARCHAR,
                reason VARCHAR,
                actor VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS builds (
                build_id VARCHAR PRIMARY KEY,
                proposal_name VARCHAR NOT NULL,
                attempt_number INTEGER NOT NULL,
                parent_build_id VARCHAR,
                run_id VARCHAR,
                model VARCHAR,
                endpoint VARCHAR,
                packet_sha256 VARCHAR,
                status VARCHAR NOT NULL,
                failure_kind VARCHAR,
                prompt_tokens INTEGER,
                completion_tokens INTEGER,
                latency_ms DOUBLE,
                cost_usd DOUBLE,
                skill_sha256 VARCHAR,
                test_sha256 VARCHAR,
                started_at TIMESTAMPTZ NOT NULL,
                finished_at TIMESTAMPTZ,
                UNIQUE (proposal_name, attempt_number)
            )""",
            """CREATE TABLE IF NOT EXISTS gate_results (
                build_id VARCHAR NOT NULL,
                gate VARCHAR NOT NULL,
                verdict VARCHAR NOT NULL,
                effective_verdict VARCHAR NOT NULL,
                reason VARCHAR NOT NULL,
                duration_ms DOUBLE NOT NULL,
                messages_json VARCHAR NOT NULL,
                details_json VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (build_id, gate)
            )""",
            """CREATE TABLE IF NOT EXISTS research_notes (
                build_id VARCHAR PRIMARY KEY,
                proposal_name VARCHAR NOT NULL,
                attempt_number INTEGER NOT NULL,
                failure_kind VARCHAR NOT NULL,
                fingerprint VARCHAR NOT NULL,
                facts_json VARCHAR NOT NULL,
                triggers_json VARCHAR NOT NULL,
                advice VARCHAR,
                escalated BOOLEAN NOT NULL,
                note_sha256 VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS approvals (
                proposal_name VARCHAR NOT NULL,
                build_id VARCHAR NOT NULL,
                approved_by VARCHAR NOT NULL,
                policy VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS model_set_aside (
                config_fingerprint VARCHAR NOT NULL,
                model VARCHAR NOT NULL,
                reason VARCHAR NOT NULL,
                build_id VARCHAR,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (config_fingerprint, model)
            )""",
            """CREATE TABLE IF NOT EXISTS ingest_offsets (
                source VARCHAR PRIMARY KEY,
                byte_offset BIGINT NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS retry_requests (
                proposal_name VARCHAR NOT NULL,
                requested_by VARCHAR NOT NULL,
                hint VARCHAR,
                consumed_by_build VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS promotions (
                seq INTEGER PRIMARY KEY,
                proposal_name VARCHAR NOT NULL,
                build_id VARCHAR NOT NULL,
                from_status VARCHAR NOT NULL,
                to_status VARCHAR NOT NULL,
                approved_by VARCHAR NOT NULL,
                source_sha256 VARCHAR NOT NULL,
                test_sha256 VARCHAR,
                skill_path VARCHAR NOT NULL,
                prev_hash VARCHAR NOT NULL,
                record_hash VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS artifacts (
                sha256 VARCHAR PRIMARY KEY,
                kind VARCHAR NOT NULL,
                size BIGINT NOT NULL,
                path VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS lineage (
                parent_sha256 VARCHAR NOT NULL,
                child_sha256 VARCHAR NOT NULL,
                relation VARCHAR NOT NULL,
                build_id VARCHAR,
                proposal_name VARCHAR,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (parent_sha256, child_sha256, relation)
            )""",
            """CREATE TABLE IF NOT EXISTS build_artifacts (
                build_id VARCHAR NOT NULL,
                role VARCHAR NOT NULL,
                sha256 VARCHAR NOT NULL,
                PRIMARY KEY (build_id, role)
            )""",
            """CREATE TABLE IF NOT EXISTS model_outcomes (
                build_id VARCHAR PRIMARY KEY,
                proposal_name VARCHAR NOT NULL,
                model VARCHAR NOT NULL,
                task_type VARCHAR NOT NULL,
                success BOOLEAN NOT NULL,
                failure_kind VARCHAR,
                latency_ms DOUBLE,
                tokens INTEGER,
                cost_usd DOUBLE,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS executions (
                execution_id VARCHAR PRIMARY KEY,
                parent_execution_id VARCHAR,
                replay_of VARCHAR,
                session_id VARCHAR,
                skill_name VARCHAR NOT NULL,
                source_hash VARCHAR,
                side_effect_class VARCHAR,
                input_json VARCHAR,
                output_json VARCHAR,
                success BOOLEAN NOT NULL,
                error VARCHAR,
                started_at TIMESTAMPTZ,
                finished_at TIMESTAMPTZ,
                duration_ms DOUBLE
            )""",
            "CREATE INDEX IF NOT EXISTS idx_builds_proposal ON builds (proposal_name, attempt_number)",
            "CREATE INDEX IF NOT EXISTS idx_events_proposal ON status_events (proposal_name)",
            "CREATE INDEX IF NOT EXISTS idx_lineage_child ON lineage (child_sha256)",
            "CREATE INDEX IF NOT EXISTS idx_promotions_proposal ON promotions (proposal_name)",
        ),
    ),
    (
        2,
        (
            # Each lineage edge carries its child's kind and size, so `kavi lineage NAME` reads the proposal's
            # edges alone instead of joining every artifact ever stored (a scan that grew with the ledger).
            "ALTER TABLE lineage ADD COLUMN IF NOT EXISTS child_kind VARCHAR",
            "ALTER TABLE lineage ADD COLUMN IF NOT EXISTS child_size BIGINT",
            """UPDATE lineage SET child_kind = a.kind, child_size = a.size
               FROM artifacts a WHERE a.sha256 = lineage.child_sha256 AND lineage.child_kind IS NULL""",
            # The per-proposal and per-build reads of `kavi lineage` and the forge's steps look rows up by these
            # columns; without an index each lookup scans the column, which grows with the ledger.
            "CREATE INDEX IF NOT EXISTS idx_lineage_proposal ON lineage (proposal_name)",
            "CREATE INDEX IF NOT EXISTS idx_gate_results_build ON gate_results (build_id)",
            "CREATE INDEX IF NOT EXISTS idx_build_artifacts_build ON build_artifacts (build_id)",
            "CREATE INDEX IF NOT EXISTS idx_builds_proposal_name ON builds (proposal_name)",
            "CREATE INDEX IF NOT EXISTS idx_research_proposal ON research_notes (proposal_name)",
        ),
    ),
    (
        3,
        # DuckDB rewrites every index of a table it checkpoints, and it checkpoints when the last connection of a
        # process closes: each forge step paid, per indexed table it wrote, a rewrite of an index as large as the
        # whole ledger. The tables that grow with every attempt keep
        # no index: the ledger's code keeps their keys unique (it is the only writer, one process at a time), and
        # a lookup scans one column. Only `proposals` (one row per skill) and `promotions` (the sequence of its
        # hash chain) keep their keys.
        (
            *(stmt for table, columns in _UNINDEXED for stmt in (
                f"CREATE TABLE {table}_v3 ({columns})",
                f"INSERT INTO {table}_v3 SELECT * FROM {table}",
                f"DROP TABLE {table}",
                f"ALTER TABLE {table}_v3 RENAME TO {table}",
            )),
            "DROP INDEX IF EXISTS idx_events_proposal",
            "DROP INDEX IF EXISTS idx_promotions_proposal",
        ),
    ),
    (
        4,
        # `kavi status` lists every proposal with its latest attempt: finding each proposal's latest build read the
        # whole builds table (three rows per proposal and growing). The proposal row carries its latest attempt,
        # written in the same transaction as the build row it mirrors, so the listing reads one row per proposal.
        (
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS attempts INTEGER DEFAULT 0",
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS latest_build_id VARCHAR",
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS latest_model VARCHAR",
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS latest_failure_kind VARCHAR",
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS latest_build_status VARCHAR",
            f"UPDATE proposals SET {LATEST_BUILD_SET} FROM ({LATEST_BUILDS}) b WHERE b.proposal_name = proposals.name",
        ),
    ),
    (
        5,
        # Migration 3 kept the keys of `proposals` and `promotions`. Inserting one row into a keyed table makes the
        # checkpoint at the connection's close rewrite the table's row group with its index, at a cost that grows
        # with every proposal and promotion. Both tables lose their keys; the records keep names unique (checked in
        # the writing transaction) and the promotion sequence is the hash chain's, which `kavi verify` checks end to
        # end.
        (
            f"CREATE TABLE proposals_v5 ({_PROPOSALS_V5})",
            "INSERT INTO proposals_v5 SELECT * FROM proposals",
            "DROP TABLE proposals",
            "ALTER TABLE proposals_v5 RENAME TO proposals",
            f"CREATE TABLE promotions_v5 ({_PROMOTIONS_V5})",
            "INSERT INTO promotions_v5 SELECT * FROM promotions",
            "DROP TABLE promotions",
            "ALTER TABLE promotions_v5 RENAME TO promotions",
        ),
    ),
    (
        6,
        # Versioned skills. Trust belongs to a version, not to the proposal: a promotion is version N of its skill
        # (the N-th promotion of that name in the hash chain), kept with the spec revision, spec hash and side-effect
        # class it was built from, and it keeps serving whatever later attempts of the proposal do. A re-proposed
        # spec is a new revision (with its diff), never an edit of a trusted version. New tables carry no key (see
        # migrations 3 and 5): the records keep (name, revision) and (name, version) unique in the writing
        # transaction, and the chain's linear order is what `kavi verify` checks.
        (
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS revision INTEGER DEFAULT 1",
            "ALTER TABLE proposals ADD COLUMN IF NOT EXISTS trusted_version INTEGER",
            "UPDATE proposals SET revision = 1 WHERE revision IS NULL",
            """CREATE TABLE IF NOT EXISTS proposal_revisions (
                name VARCHAR NOT NULL,
                revision INTEGER NOT NULL,
                spec_json VARCHAR NOT NULL,
                spec_sha256 VARCHAR NOT NULL,
                side_effect_class VARCHAR NOT NULL,
                previous_class VARCHAR,
                diff_json VARCHAR NOT NULL,
                actor VARCHAR,
                source_path VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            # What was trusted before keeps its spec as revision 1 (earlier replaced specs were not kept).
            "INSERT INTO proposal_revisions SELECT name, 1, spec_json, spec_sha256, side_effect_class, NULL, '[]', "
            "'schema migration 6', source_path, created_at FROM proposals",
            "ALTER TABLE builds ADD COLUMN IF NOT EXISTS spec_revision INTEGER",
            "UPDATE builds SET spec_revision = 1",
            "ALTER TABLE promotions ADD COLUMN IF NOT EXISTS version INTEGER",
            "ALTER TABLE promotions ADD COLUMN IF NOT EXISTS spec_revision INTEGER",
            "ALTER TABLE promotions ADD COLUMN IF NOT EXISTS spec_sha256 VARCHAR",
            "ALTER TABLE promotions ADD COLUMN IF NOT EXISTS side_effect_class VARCHAR",
            # 1: hashed without the four columns above (records written before schema 6); 2: hashed with them.
            "ALTER TABLE promotions ADD COLUMN IF NOT EXISTS record_format INTEGER DEFAULT 1",
            """UPDATE promotions SET version = r.v FROM (
                   SELECT seq AS s, row_number() OVER (PARTITION BY proposal_name ORDER BY seq) AS v FROM promotions
               ) r WHERE r.s = promotions.seq""",
            """UPDATE promotions SET spec_revision = 1, spec_sha256 = p.spec_sha256,
                   side_effect_class = p.side_effect_class, record_format = 1
               FROM proposals p WHERE p.name = promotions.proposal_name""",
            """CREATE TABLE IF NOT EXISTS version_events (
                name VARCHAR NOT NULL,
                version INTEGER NOT NULL,
                status VARCHAR NOT NULL,
                reason VARCHAR NOT NULL,
                actor VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            # Before versions, a re-promotion overwrote the one trusted file: the earlier versions' bytes are gone.
            """INSERT INTO version_events SELECT p.proposal_name, p.version, 'RETIRED',
                   'its file was overwritten in place by a later promotion before skills were versioned (schema 6)',
                   'schema migration 6', now()
               FROM promotions p WHERE EXISTS (SELECT 1 FROM promotions q WHERE q.proposal_name = p.proposal_name
                                               AND q.seq > p.seq AND q.skill_path = p.skill_path)""",
            # A skill the old ledger no longer trusted (a later attempt had taken its trust) is not trusted again by
            # a migration: a person re-forges and approves it.
            """INSERT INTO version_events SELECT p.proposal_name, p.version, 'REVOKED',
                   'the proposal was ' || pr.status || ', not TRUSTED, when skills became versioned (schema 6)',
                   'schema migration 6', now()
               FROM promotions p JOIN proposals pr ON pr.name = p.proposal_name
               WHERE pr.status <> 'TRUSTED' AND p.version = (
                   SELECT max(version) FROM promotions q WHERE q.proposal_name = p.proposal_name)""",
            """UPDATE proposals SET trusted_version = t.v FROM (
                   SELECT proposal_name AS n, max(version) AS v FROM promotions p WHERE NOT EXISTS (
                       SELECT 1 FROM version_events e WHERE e.name = p.proposal_name AND e.version = p.version)
                   GROUP BY proposal_name
               ) t WHERE t.n = proposals.name""",
            "ALTER TABLE executions ADD COLUMN IF NOT EXISTS skill_version INTEGER",
        ),
    ),
    (
        7,
        # Independent implementations: a second model writes the same skill from the builder's view of the
        # spec, and the acceptance evidence compares the two on generated inputs. One request per proposal spec (its
        # digest keys the cache: a holdout added is a new spec), recorded like a build's model call but never a
        # builder's outcome: the router does not learn from it. No key (see migrations 3 and 5).
        (
            """CREATE TABLE IF NOT EXISTS independents (
                independent_id VARCHAR NOT NULL,
                proposal_name VARCHAR NOT NULL,
                spec_sha256 VARCHAR NOT NULL,
                requested_by_build VARCHAR,
                model VARCHAR NOT NULL,
                choice_reason VARCHAR NOT NULL,
                endpoint VARCHAR,
                status VARCHAR NOT NULL,
                reason VARCHAR,
                source_sha256 VARCHAR,
                answer_sha256 VARCHAR,
                prompt_tokens INTEGER,
                completion_tokens INTEGER,
                latency_ms DOUBLE,
                cost_usd DOUBLE,
                created_at TIMESTAMPTZ NOT NULL
            )""",
        ),
    ),
    (
        8,
        # Decomposition (RIVA): a proposal the forge could not verify is split by the model into child
        # proposals and a composition. One row per request (refused answers included, with the reason), and the
        # parent → child edges of the accepted ones. No key (see migrations 3 and 5).
        (
            """CREATE TABLE IF NOT EXISTS decompositions (
                decomposition_id VARCHAR NOT NULL,
                parent_name VARCHAR NOT NULL,
                spec_sha256 VARCHAR NOT NULL,
                root_name VARCHAR NOT NULL,
                depth INTEGER NOT NULL,
                trigger VARCHAR NOT NULL,
                model VARCHAR,
                endpoint VARCHAR,
                status VARCHAR NOT NULL,
                reason VARCHAR,
                composition_json VARCHAR,
                answer_sha256 VARCHAR,
                composition_sha256 VARCHAR,
                build_id VARCHAR,
                created_at TIMESTAMPTZ NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS decomposition_edges (
                decomposition_id VARCHAR NOT NULL,
                parent_name VARCHAR NOT NULL,
                child_name VARCHAR NOT NULL,
                position INTEGER NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
        ),
    ),
    (
        9,
        # The coach and ceremony levels. `coach_reviews`: every call of the coach model, one row per try,
        # kept apart from `model_outcomes` so a reviewer's verdict or failure never moves a builder's posterior.
        # `ceremony_levels`: a person's level for a proposal (who, when, why); a row below the complexity score's
        # level counts only when it is an override with a reason. No key (see migrations 3 and 5).
        (
            """CREATE TABLE IF NOT EXISTS coach_reviews (
                review_id VARCHAR NOT NULL,
                proposal_name VARCHAR NOT NULL,
                build_id VARCHAR NOT NULL,
                builder_model VARCHAR,
                model VARCHAR NOT NULL,
                task_type VARCHAR NOT NULL,
                ceremony_level VARCHAR NOT NULL,
                status VARCHAR NOT NULL,
                verdict VARCHAR,
                findings_json VARCHAR,
                reason VARCHAR,
                request_sha256 VARCHAR,
                answer_sha256 VARCHAR,
                prompt_tokens INTEGER,
                completion_tokens INTEGER,
                latency_ms DOUBLE,
                cost_usd DOUBLE,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS ceremony_levels (
                proposal_name VARCHAR NOT NULL,
                level VARCHAR NOT NULL,
                score_level VARCHAR NOT NULL,
                override BOOLEAN NOT NULL,
                reason VARCHAR,
                actor VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
        ),
    ),
    (
        11,
        # Serving trusted skills over MCP: an execution records its caller (the MCP client's name and
        # version from its initialize request); NULL for a run from the local CLI and for every earlier record.
        ("ALTER TABLE executions ADD COLUMN IF NOT EXISTS caller VARCHAR",),
    ),
    (
        12,
        # Re-verification when the judges change. What judged a verification (Python, the gate tools'
        # versions, the policy files' hash, the gate configuration) is stored once per distinct fingerprint; every
        # verification, the forge's and each later re-run of the gates on a trusted version, is a row beside the
        # earlier ones (never an update), naming its fingerprint and its failing gates. `model_calls` records the
        # model calls that are neither a build nor an independent implementation (research advice), so a skill's
        # forge cost counts every token spent on it. No key (see migrations 3 and 5).
        (
            """CREATE TABLE IF NOT EXISTS judge_fingerprints (
                digest VARCHAR NOT NULL,
                fingerprint_json VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS verifications (
                verification_id VARCHAR NOT NULL,
                build_id VARCHAR NOT NULL,
                proposal_name VARCHAR NOT NULL,
                version INTEGER,
                kind VARCHAR NOT NULL,
                fingerprint VARCHAR NOT NULL,
                passed BOOLEAN NOT NULL,
                failing_json VARCHAR NOT NULL,
                report_sha256 VARCHAR,
                duration_s DOUBLE,
                actor VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS model_calls (
                call_id VARCHAR NOT NULL,
                purpose VARCHAR NOT NULL,
                proposal_name VARCHAR NOT NULL,
                build_id VARCHAR,
                model VARCHAR NOT NULL,
                prompt_tokens INTEGER,
                completion_tokens INTEGER,
                latency_ms DOUBLE,
                ok BOOLEAN NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
        ),
    ),
    (
        13,
        # Signed provenance: each promotion's in-toto statement, signed with the home's Ed25519 key, is a
        # content-addressed artifact; this table links it to the promotion. Promotions made before this migration
        # get a row without an envelope, so `kavi verify` can tell "promoted before signing existed" from "missing".
        (
            """CREATE TABLE IF NOT EXISTS attestations (
                promotion_seq INTEGER NOT NULL,
                proposal_name VARCHAR NOT NULL,
                version INTEGER,
                build_id VARCHAR NOT NULL,
                envelope_sha256 VARCHAR,
                key_id VARCHAR,
                note VARCHAR,
                created_at TIMESTAMPTZ NOT NULL
            )""",
            "INSERT INTO attestations SELECT seq, proposal_name, version, build_id, NULL, NULL, "
            "'promoted before signed provenance (schema 13)', now() FROM promotions",
        ),
    ),
    (
        14,
        # What the duplicate guard found when a spec was proposed: the closest trusted skills, each with its
        # score, how its fields differ and, above the refusal score, the evidence. The proposal asset shows it.
        (
            """CREATE TABLE IF NOT EXISTS close_skills (
                proposal_name VARCHAR NOT NULL,
                spec_sha256 VARCHAR NOT NULL,
                ranking VARCHAR NOT NULL,
                close_json VARCHAR NOT NULL,
                created_at TIMESTAMPTZ NOT NULL
            )""",
        ),
    ),
)

SCHEMA_VERSION = max(v for v, _ in MIGRATIONS)
