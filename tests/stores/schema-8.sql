-- A store of schema 8, as the daemon left it before the launcher's rounds were called shuffles and its deck
-- the hopper: made by that version's code (two rounds, the second still open, with contributions, presses,
-- lid openings and a refill), dumped as SQL. tests/test_store_upgrade.py opens it with today's code.
PRAGMA application_id = 1431195468;
PRAGMA user_version = 8;
CREATE TABLE deck (
        id        INTEGER PRIMARY KEY CHECK (id = 1),
        loaded    INTEGER NOT NULL,
        dispensed INTEGER NOT NULL
    );
INSERT INTO "deck" VALUES(1,80,5);
CREATE TABLE event_ids (
        id       INTEGER PRIMARY KEY CHECK (id = 1),
        reserved INTEGER NOT NULL
    );
INSERT INTO "event_ids" VALUES(1,38);
CREATE TABLE events (
        id   INTEGER PRIMARY KEY,
        ts   REAL NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL
    );
INSERT INTO "events" VALUES(1,1.79613764978204774858e+09,'round.started','{"round": 1, "profile": "pattern", "commitment": "56ebfb675621347d3aa2d9adfa0bb6ca9a9ca9a20717bd6b344b18c0f7824225"}');
INSERT INTO "events" VALUES(2,1.79613764980515408517e+09,'daemon.started','{"hardware": {"backend": "sim", "cues": true, "aim": null, "sim_deck": 112, "sim_cards_out": 0}}');
INSERT INTO "events" VALUES(3,1.79613764996582913396e+09,'round.contributed','{"round": 1, "index": 0, "value": "00112233445566778899aabbccddeeff", "count": 1}');
INSERT INTO "events" VALUES(4,1.79613765003718471526e+09,'round.contributed','{"round": 1, "index": 1, "value": "0123456789abcdef0123456789abcdef", "count": 2}');
INSERT INTO "events" VALUES(5,1.79613765003750705724e+09,'button.pressed','{"press": 1, "source": "web"}');
INSERT INTO "events" VALUES(6,1.79613765003760457038e+09,'launcher.missed','{"press": 1, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(7,1.79613765003777313229e+09,'button.pressed','{"press": 2, "source": "web"}');
INSERT INTO "events" VALUES(8,1.79613765011110019685e+09,'launcher.fired','{"press": 2, "requested": 3, "dispensed": 3, "ms": 31, "tension": 0.0, "jackpot": false}');
INSERT INTO "events" VALUES(9,1.79613765011889505384e+09,'deck.changed','{"loaded": 112, "dispensed": 3, "remaining": 109}');
INSERT INTO "events" VALUES(10,1.79613765011922550196e+09,'button.pressed','{"press": 3, "source": "web"}');
INSERT INTO "events" VALUES(11,1.79613765011927390097e+09,'launcher.missed','{"press": 3, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(12,1.79613765011931681629e+09,'button.pressed','{"press": 4, "source": "web"}');
INSERT INTO "events" VALUES(13,1.79613765011936020853e+09,'launcher.missed','{"press": 4, "tension": 0.6666666666666666, "misses_in_row": 2}');
INSERT INTO "events" VALUES(14,1.79613765014081740384e+09,'launcher.lid','{"open": true}');
INSERT INTO "events" VALUES(15,1.79613765014090657231e+09,'launcher.lid','{"open": false}');
INSERT INTO "events" VALUES(16,1.79613765014099025724e+09,'button.pressed','{"press": 5, "source": "web"}');
INSERT INTO "events" VALUES(17,1.79613765014101910586e+09,'launcher.missed','{"press": 5, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(18,1.79613765014115214346e+09,'button.pressed','{"press": 6, "source": "web"}');
INSERT INTO "events" VALUES(19,1.79613765022887182229e+09,'launcher.fired','{"press": 6, "requested": 4, "dispensed": 4, "ms": 44, "tension": 0.0, "jackpot": false}');
INSERT INTO "events" VALUES(20,1.79613765023669457428e+09,'deck.changed','{"loaded": 112, "dispensed": 7, "remaining": 105}');
INSERT INTO "events" VALUES(21,1.79613765023699283604e+09,'button.pressed','{"press": 7, "source": "web"}');
INSERT INTO "events" VALUES(22,1.79613765023703908919e+09,'launcher.missed','{"press": 7, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(23,1.79613765024933934215e+09,'round.ended','{"round": 1, "profile": "pattern", "commitment": "56ebfb675621347d3aa2d9adfa0bb6ca9a9ca9a20717bd6b344b18c0f7824225", "seed": "9417e1e54720cd37b8533a190155574d", "presses": 7}');
INSERT INTO "events" VALUES(24,1.79613765024973678595e+09,'round.started','{"round": 2, "profile": "pattern", "commitment": "e9ca61816f849c41657f83a5174b461b281f6f7448868e023637b41662b3141c"}');
INSERT INTO "events" VALUES(25,1.79613765025457191464e+09,'round.contributed','{"round": 2, "index": 0, "value": "fedcba9876543210fedcba9876543210", "count": 1}');
INSERT INTO "events" VALUES(26,1.79613765025492143627e+09,'button.pressed','{"press": 1, "source": "web"}');
INSERT INTO "events" VALUES(27,1.79613765025495719911e+09,'launcher.missed','{"press": 1, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(28,1.79613765025808930393e+09,'button.pressed','{"press": 2, "source": "web"}');
INSERT INTO "events" VALUES(29,1.79613765031597399706e+09,'launcher.fired','{"press": 2, "requested": 2, "dispensed": 2, "ms": 21, "tension": 0.0, "jackpot": false}');
INSERT INTO "events" VALUES(30,1.79613765031637763981e+09,'deck.changed','{"loaded": 112, "dispensed": 9, "remaining": 103}');
INSERT INTO "events" VALUES(31,1.79613765032945919041e+09,'launcher.lid','{"open": true}');
INSERT INTO "events" VALUES(32,1.79613765032957363129e+09,'launcher.lid','{"open": false}');
INSERT INTO "events" VALUES(33,1.79613765032964205745e+09,'button.pressed','{"press": 3, "source": "web"}');
INSERT INTO "events" VALUES(34,1.79613765032967185979e+09,'launcher.missed','{"press": 3, "tension": 0.3333333333333333, "misses_in_row": 1}');
INSERT INTO "events" VALUES(35,1.79613765033968615526e+09,'deck.reloaded','{"loaded": 80, "dispensed": 0, "remaining": 80}');
INSERT INTO "events" VALUES(36,1.79613765034047937396e+09,'button.pressed','{"press": 4, "source": "web"}');
INSERT INTO "events" VALUES(37,1.79613765042026090625e+09,'launcher.fired','{"press": 4, "requested": 5, "dispensed": 5, "ms": 39, "tension": 0.0, "jackpot": false}');
INSERT INTO "events" VALUES(38,1.79613765042060875894e+09,'deck.changed','{"loaded": 80, "dispensed": 5, "remaining": 75}');
CREATE TABLE games (
        id         INTEGER PRIMARY KEY,
        state      TEXT NOT NULL,
        started_ts REAL NOT NULL
    );
CREATE TABLE pins (
        role       TEXT PRIMARY KEY,
        salt       BLOB NOT NULL,
        hash       BLOB NOT NULL,
        changed_ts REAL NOT NULL
    );
INSERT INTO "pins" VALUES('table',X'696575C6C1483125695C4C720461F98A',X'95E997BC95C443CEE576885D8DBBAB897C8C6C73C0CAB92F3F871A3230743F97',1.79613764973617053032e+09);
INSERT INTO "pins" VALUES('admin',X'A2755D462FC52C3C31BA0FF82FCD8694',X'9C5930AE5F7A3BF19CA2792C21A549F52E6B258931B0F44327D98F668953C92B',1.79613764977346897127e+09);
CREATE TABLE rounds (
        number        INTEGER PRIMARY KEY,
        profile       TEXT NOT NULL,
        seed          TEXT NOT NULL,
        commitment    TEXT NOT NULL,
        started_event INTEGER NOT NULL,
        started_ts    REAL NOT NULL,
        ended_ts      REAL,
        record        TEXT
    , restarts TEXT NOT NULL DEFAULT '[]');
INSERT INTO "rounds" VALUES(1,'{"name": "pattern", "parameters": {"hazard": [], "max_fires_in_row": 2, "card_weights": [0.18, 0.22, 0.2, 0.15, 0.11, 0.08, 0.04, 0.02], "jackpot_probability": 0.0, "jackpot_cards": [12, 15], "pause_probability": 0.0, "pause_ms": [0, 0], "pattern": [2, 6, 9, 13, 17, 21, 24, 26, 27, 29, 32, 36, 37, 41, 44, 47, 48, 51, 54, 57, 58, 62, 66, 69, 72, 73, 77, 81, 84, 85, 88, 92, 93, 96]}}','9417e1e54720cd37b8533a190155574d','56ebfb675621347d3aa2d9adfa0bb6ca9a9ca9a20717bd6b344b18c0f7824225',1,1.79613764978204774858e+09,1.79613765023806071282e+09,'{"round": 1, "format": "uno-launcher-round/2", "profile": {"name": "pattern", "hazard": [], "max_fires_in_row": 2, "card_weights": [0.18, 0.22, 0.2, 0.15, 0.11, 0.08, 0.04, 0.02], "jackpot_probability": 0.0, "jackpot_cards": [12, 15], "pause_probability": 0.0, "pause_ms": [0, 0], "pattern": [2, 6, 9, 13, 17, 21, 24, 26, 27, 29, 32, 36, 37, 41, 44, 47, 48, 51, 54, 57, 58, 62, 66, 69, 72, 73, 77, 81, 84, 85, 88, 92, 93, 96]}, "commitment": "56ebfb675621347d3aa2d9adfa0bb6ca9a9ca9a20717bd6b344b18c0f7824225", "seed": "9417e1e54720cd37b8533a190155574d", "contributions": ["00112233445566778899aabbccddeeff", "0123456789abcdef0123456789abcdef"], "restarts": [4], "outcomes": [{"press": 1, "cards": 0, "jackpot": false, "pause_ms": 0, "dispensed": 0, "stop": "miss"}, {"press": 2, "cards": 3, "jackpot": false, "pause_ms": 0, "dispensed": 3, "stop": "count"}, {"press": 3, "cards": 0, "jackpot": false, "pause_ms": 0, "dispensed": 0, "stop": "miss"}, {"press": 4, "cards": 0, "jackpot": false, "pause_ms": 0, "dispensed": 0, "stop": "miss"}, {"press": 5, "cards": 0, "jackpot": false, "pause_ms": 0, "dispensed": 0, "stop": "miss"}, {"press": 6, "cards": 4, "jackpot": false, "pause_ms": 0, "dispensed": 4, "stop": "count"}, {"press": 7, "cards": 0, "jackpot": false, "pause_ms": 0, "dispensed": 0, "stop": "miss"}]}','[4]');
INSERT INTO "rounds" VALUES(2,'{"name": "pattern", "parameters": {"hazard": [], "max_fires_in_row": 2, "card_weights": [0.18, 0.22, 0.2, 0.15, 0.11, 0.08, 0.04, 0.02], "jackpot_probability": 0.0, "jackpot_cards": [12, 15], "pause_probability": 0.0, "pause_ms": [0, 0], "pattern": [2, 6, 9, 13, 17, 21, 24, 26, 27, 29, 32, 36, 37, 41, 44, 47, 48, 51, 54, 57, 58, 62, 66, 69, 72, 73, 77, 81, 84, 85, 88, 92, 93, 96]}}','9abd8ec095ee986cb80a8fe02d4d0b2b','e9ca61816f849c41657f83a5174b461b281f6f7448868e023637b41662b3141c',24,1.79613765024973678595e+09,NULL,NULL,'[2]');
CREATE TABLE sessions (
        digest     TEXT PRIMARY KEY,
        role       INTEGER NOT NULL,
        created_ts REAL NOT NULL,
        seen_ts    REAL NOT NULL
    );
INSERT INTO "sessions" VALUES('6332c3025819307c296e8635d2f8f414ab4ea69037798fa928afad31e12f0f3e',1,1.79613764988488245006e+09,1.79613764988488245006e+09);
INSERT INTO "sessions" VALUES('fc9368dbdc8cd26e9cc681128d6063a5c8965e4884b8287658823e8ba8234760',1,1.79613764995911955836e+09,1.79613764995911955836e+09);
INSERT INTO "sessions" VALUES('6d3a123315fc59404ccc9e7a717cfe552aae67273a9df209c49571d2610d695d',1,1.7961376500292704105e+09,1.7961376500292704105e+09);
