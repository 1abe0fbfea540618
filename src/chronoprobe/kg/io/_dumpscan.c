/* The lines of a Wikidata JSON dump, scanned in one pass each for what a temporal KG needs.
 *
 * The compiled half of chronoprobe.kg.io.wikidata_dump's parser (Scanner, used by its
 * parse_block). Each line is validated whole: JSON grammar, UTF-8, escapes and nesting, and the
 * shape of every field the Python parser's msgspec structs type (entity, labels, aliases,
 * claims, statements, snaks, item values). The work of each statement is done here: the item
 * statements that are no fact are counted, the item id and the time qualifiers of the others
 * read, and their bounds looked up in a cache (BoundsCache, bounded by bytes) of the answers
 * of the Python side; an item's rows are then appended to the Python lists of the block.
 *
 * A line this scanner does not fully understand (bad JSON, but also escaped keys, a field
 * given twice, an item value without its id, a snak without its datatype, nesting deeper
 * than MAX_DEPTH) is left whole to the Python parser before anything is added, and lines that
 * need Python's rules (properties, an item's own span, statements with no usable bounds) come
 * back as what was read, for the Python side to finish. So both ways give the same rows for
 * every line; the tests compare them on the same inputs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <structmember.h>
#include <string.h>

#define OK 0
#define ODD 1   /* not understood here: the Python parser reads the line */
#define DONE 2  /* end of an object or array */
#define ERR (-1) /* a Python exception is set */
#define MAX_DEPTH 64
#define MAX_PROPERTIES 1024 /* more properties on one entity: left to the Python parser */

/* The small steps every token takes, inlined where they are used (about a fifth faster). */
#if defined(__GNUC__)
#define STEP static inline __attribute__((always_inline))
#else
#define STEP static inline
#endif

/* Every function that answers OK, ODD, DONE or ERR has its answer read: the compiler says
 * where one is not. */
#if defined(__GNUC__)
#define CHECKED __attribute__((warn_unused_result))
#else
#define CHECKED
#endif

#define TRY(call)                 \
    do {                          \
        int result_ = (call);     \
        if (result_ != OK)        \
            return result_;       \
    } while (0)

typedef const unsigned char *Ptr;

typedef struct {
    Ptr p, end;
    int depth;
} Scan;

typedef struct { /* a string's contents, between its quotes */
    Ptr start;
    Py_ssize_t len;
    int escaped;
} Str;

typedef struct { /* what the Python caller configures */
    const char *lang; /* the language code (a bytes object's NUL-terminated data) */
    PyObject *span_pids; /* tuple of bytes: properties whose statements go back raw */
    PyObject *relations; /* frozenset of str, or Py_None: every relation */
} Config;

typedef struct { /* an item statement with qualifiers: perhaps a fact */
    PyObject *pid, *object;
    Ptr lists[3][2]; /* the raw snak lists of P580, P582, P585: [start, end), NULL if none */
} Candidate;

typedef struct { /* what one line gives */
    PyObject *type, *id, *datatype, *label, *description, *aliases, *spans;
    Candidate *candidates;
    Py_ssize_t count, capacity;
    long no_qualifier, deprecated, unvalued;
} Found;

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

STEP void ws(Scan *s) {
    while (s->p < s->end && *s->p <= ' ' && is_space(*s->p)) /* dumps have none: one test */
        s->p++;
}

static CHECKED int expect(Scan *s, unsigned char c) {
    ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return OK;
    }
    return ODD;
}

static int at(Scan *s, unsigned char c) {
    ws(s);
    return s->p < s->end && *s->p == c;
}

/* Length of the valid UTF-8 sequence at p (a byte >= 0x80), 0 if invalid. */
static int utf8_length(Ptr p, Ptr end) {
    unsigned char c = p[0];
    Py_ssize_t left = end - p;
    if (c >= 0xC2 && c <= 0xDF)
        return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0))
            return 0; /* overlong, or a surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90))
            return 0; /* overlong, or beyond U+10FFFF */
        return 4;
    }
    return 0;
}

static CHECKED int hex4(Ptr p, unsigned *out) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        unsigned digit;
        if (is_digit(c))
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            digit = c - 'A' + 10;
        else
            return ODD;
        value = value * 16 + digit;
    }
    *out = value;
    return OK;
}

/* A \u escape at p (pointing at the backslash): its code point and length; lone surrogates
 * are left to the Python parser. */
static CHECKED int unicode_escape(Ptr p, Ptr end, unsigned *code, int *length) {
    unsigned high, low;
    if (end - p < 6 || hex4(p + 2, &high) != OK)
        return ODD;
    if (high >= 0xDC00 && high <= 0xDFFF)
        return ODD;
    if (high < 0xD800 || high > 0xDBFF) {
        *code = high, *length = 6;
        return OK;
    }
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &low) != OK)
        return ODD;
    if (low < 0xDC00 || low > 0xDFFF)
        return ODD;
    *code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), *length = 12;
    return OK;
}

/* Where the first byte a string scan stops at (a quote, a backslash, a control character, a
 * byte that is not ASCII) is among the 16 (SSE2) or 8 bytes at p, or 0 when none: 1 + its
 * offset. DUMPSCAN_PORTABLE (-DDUMPSCAN_PORTABLE) builds the portable way on any machine, so
 * that it can be tested where SSE2 is. */
#if defined(__SSE2__) && !defined(DUMPSCAN_PORTABLE)
#include <emmintrin.h>
#define RUN 16
static int special_at(Ptr p) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)p);
    __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                                _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\')));
    __m128i low = _mm_set1_epi8(0x1F); /* control characters: max(byte, 0x1F) == 0x1F */
    hits = _mm_or_si128(hits, _mm_cmpeq_epi8(_mm_max_epu8(bytes, low), low));
    int mask = _mm_movemask_epi8(hits) | _mm_movemask_epi8(bytes); /* high bit: not ASCII */
    return mask ? __builtin_ctz(mask) + 1 : 0;
}
#else
#define RUN 8
/* Zero-byte tests of Mycroft's kind on a little-endian word; bits above the first hit may be
 * spurious, so only the lowest set bit counts. */
static int special_at(Ptr p) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t word;
    memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    word = __builtin_bswap64(word); /* the first byte lowest */
#endif
    uint64_t quote = word ^ (ones * '"'), backslash = word ^ (ones * '\\');
    uint64_t hits = ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
    hits |= (word - ones * 0x20) & ~word; /* control characters */
    uint64_t mask = (hits | word) & highs;
    return mask ? (__builtin_ctzll(mask) >> 3) + 1 : 0;
}
#endif

STEP CHECKED int string(Scan *s, Str *out) {
    if (!at(s, '"'))
        return ODD;
    Ptr p = ++s->p, end = s->end;
    int escaped = 0;
    while (p < end) {
        if (end - p >= RUN) { /* plain ASCII runs, RUN bytes at a time */
            int at = special_at(p);
            if (at == 0) {
                p += RUN;
                continue;
            }
            p += at - 1;
        }
        unsigned char c = *p;
        if (c == '"') {
            out->start = s->p, out->len = p - s->p, out->escaped = escaped;
            s->p = p + 1;
            return OK;
        }
        if (c == '\\') {
            escaped = 1;
            if (p + 1 >= end)
                return ODD;
            if (p[1] == 'u') {
                unsigned code;
                int length;
                TRY(unicode_escape(p, end, &code, &length));
                p += length;
            } else if (strchr("\"\\/bfnrt", p[1]) != NULL && p[1] != '\0') {
                p += 2;
            } else {
                return ODD;
            }
        } else if (c < 0x20) {
            return ODD;
        } else if (c < 0x80) {
            p++;
        } else {
            do { /* a run of characters that are not ASCII */
                int length = utf8_length(p, end);
                if (length == 0)
                    return ODD;
                p += length;
            } while (p < end && *p >= 0x80);
        }
    }
    return ODD;
}

/* A string without escapes (a value compared with known words); one with escapes is left to
 * the Python parser. */
static CHECKED int plain_string(Scan *s, Str *out) {
    TRY(string(s, out));
    return out->escaped ? ODD : OK;
}

/* A second read of text validated before failed: a bug here, not bad input; NULL. */
static PyObject *unreadable(const char *what) {
    PyErr_Format(PyExc_SystemError, "_dumpscan: %s, validated before, is unreadable", what);
    return NULL;
}

/* A validated string's contents as a Python str. */
static PyObject *text_of(const Str *str) {
    if (!str->escaped)
        return PyUnicode_DecodeUTF8((const char *)str->start, str->len, NULL);
    char *buffer = PyMem_Malloc(str->len ? str->len : 1);
    if (buffer == NULL)
        return PyErr_NoMemory();
    Ptr p = str->start, end = str->start + str->len;
    char *out = buffer;
    while (p < end) {
        if (*p != '\\') {
            *out++ = (char)*p++;
            continue;
        }
        unsigned char c = p[1];
        if (c == 'u') {
            unsigned code;
            int length;
            if (unicode_escape(p, end, &code, &length) != OK) { /* validated by string() */
                PyMem_Free(buffer);
                return unreadable("a \\u escape");
            }
            p += length;
            if (code < 0x80) {
                *out++ = (char)code;
            } else if (code < 0x800) {
                *out++ = (char)(0xC0 | (code >> 6));
                *out++ = (char)(0x80 | (code & 0x3F));
            } else if (code < 0x10000) {
                *out++ = (char)(0xE0 | (code >> 12));
                *out++ = (char)(0x80 | ((code >> 6) & 0x3F));
                *out++ = (char)(0x80 | (code & 0x3F));
            } else {
                *out++ = (char)(0xF0 | (code >> 18));
                *out++ = (char)(0x80 | ((code >> 12) & 0x3F));
                *out++ = (char)(0x80 | ((code >> 6) & 0x3F));
                *out++ = (char)(0x80 | (code & 0x3F));
            }
            continue;
        }
        p += 2;
        switch (c) {
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case 't': *out++ = '\t'; break;
        default: *out++ = (char)c; /* " \ / */
        }
    }
    PyObject *result = PyUnicode_DecodeUTF8(buffer, out - buffer, NULL);
    PyMem_Free(buffer);
    return result;
}

/* A key or a value compared with a known word; escaped ones are not compared. */
static int is_word(const Str *str, const char *word) {
    size_t length = strlen(word);
    return !str->escaped && (size_t)str->len == length && memcmp(str->start, word, length) == 0;
}

static CHECKED int number(Scan *s, int *integral) {
    Ptr p = s->p, end = s->end;
    *integral = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return ODD;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (p < end && is_digit(*p))
            p++;
    else
        return ODD;
    if (p < end && *p == '.') {
        *integral = 0, p++;
        if (p >= end || !is_digit(*p))
            return ODD;
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *integral = 0, p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit(*p))
            return ODD;
        while (p < end && is_digit(*p))
            p++;
    }
    s->p = p;
    return OK;
}

static CHECKED int literal(Scan *s, const char *word) {
    size_t length = strlen(word);
    if ((size_t)(s->end - s->p) < length || memcmp(s->p, word, length) != 0)
        return ODD;
    s->p += length;
    return OK;
}

static CHECKED int enter(Scan *s, unsigned char open) {
    TRY(expect(s, open));
    return ++s->depth > MAX_DEPTH ? ODD : OK;
}

/* The next item of an entered object or array, the cursor at it; DONE after its ``close``. */
STEP CHECKED int next_item(Scan *s, int *first, unsigned char close) {
    ws(s);
    if (s->p >= s->end)
        return ODD;
    if (*s->p == close) {
        s->p++, s->depth--;
        return DONE;
    }
    if (!*first && *s->p++ != ',')
        return ODD;
    *first = 0;
    return OK;
}

/* The next member of an entered object: its key, the cursor at its value; DONE after '}'. */
STEP CHECKED int member(Scan *s, int *first, Str *key) {
    int result = next_item(s, first, '}');
    if (result != OK)
        return result;
    TRY(string(s, key));
    return expect(s, ':');
}

/* The next element of an entered array, the cursor at it; DONE after ']'. */
STEP CHECKED int element(Scan *s, int *first) { return next_item(s, first, ']'); }

/* Any JSON value, validated and passed over. Containers are followed without recursion: a
 * stack of the brackets still open. */
static CHECKED int skip(Scan *s) {
    unsigned char open[MAX_DEPTH];
    int top = 0, integral;
    Str key;
    for (;;) {
        ws(s); /* a value starts here */
        if (s->p >= s->end)
            return ODD;
        unsigned char c = *s->p;
        if (c == '{' || c == '[') {
            if (s->depth + top >= MAX_DEPTH)
                return ODD;
            open[top++] = c, s->p++;
            ws(s);
            if (s->p < s->end && *s->p == (c == '{' ? '}' : ']')) {
                s->p++, top--; /* empty */
            } else {
                if (c == '{') {
                    TRY(string(s, &key));
                    TRY(expect(s, ':'));
                }
                continue; /* to its first value */
            }
        } else if (c == '"') {
            TRY(string(s, &key));
        } else if (c == 't') {
            TRY(literal(s, "true"));
        } else if (c == 'f') {
            TRY(literal(s, "false"));
        } else if (c == 'n') {
            TRY(literal(s, "null"));
        } else {
            TRY(number(s, &integral));
        }
        for (;;) { /* after a value: close containers, or on to the next value */
            if (top == 0)
                return OK;
            ws(s);
            if (s->p >= s->end)
                return ODD;
            c = *s->p++;
            if (c == ',') {
                if (open[top - 1] == '{') {
                    TRY(string(s, &key));
                    TRY(expect(s, ':'));
                }
                break;
            }
            if (c != (open[top - 1] == '{' ? '}' : ']'))
                return ODD;
            top--;
        }
    }
}

static int is_null(Scan *s) {
    if (at(s, 'n'))
        return literal(s, "null") == OK;
    return 0;
}

/* The empty list Wikibase writes for an empty map; 1 if it was one. */
static CHECKED int empty_list(Scan *s, int *was) {
    *was = 0;
    if (!at(s, '['))
        return OK;
    int first = 1;
    TRY(enter(s, '['));
    if (element(s, &first) != DONE)
        return ODD;
    *was = 1;
    return OK;
}

typedef struct { /* a field name, and its length */
    const char *text;
    Py_ssize_t len;
} Name;

#define NAME(text) {text, sizeof(text) - 1}
#define NO_MORE_NAMES {NULL, 0}

/* The fields a reader knows in an object, by name, and those it has met. */
typedef struct {
    const Name *names; /* ended by {NULL, 0} */
    int first;
    unsigned seen;
} Fields;

/* The next field of an entered object that is named in ``fields``: its index in *which, the
 * cursor at its value; DONE after '}'. Fields of other names are validated and passed over.
 * Escaped names and a field given twice are left to the Python parser (which field wins is
 * its decoder's call). */
STEP CHECKED int field(Scan *s, Fields *fields, int *which) {
    Str key;
    int result;
    while ((result = member(s, &fields->first, &key)) == OK) {
        if (key.escaped)
            return ODD;
        int i = 0;
        while (fields->names[i].text != NULL &&
               (fields->names[i].len != key.len ||
                memcmp(fields->names[i].text, key.start, key.len) != 0))
            i++;
        if (fields->names[i].text == NULL) {
            TRY(skip(s));
            continue;
        }
        if (fields->seen & (1u << i))
            return ODD;
        fields->seen |= 1u << i;
        *which = i;
        return OK;
    }
    return result;
}

/* {"value": "..."} (other fields skipped): the value as a str. */
static CHECKED int text_value(Scan *s, PyObject **out) {
    static const Name names[] = {NAME("value"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result;
    Str value;
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK)
        TRY(string(s, &value));
    if (result != DONE || !fields.seen)
        return result == DONE ? ODD : result;
    *out = text_of(&value);
    return *out == NULL ? ERR : OK;
}

/* A value of one language in a map of languages, read into ``out``. */
typedef int (*LanguageReader)(Scan *s, void *out);

/* A map of languages (labels, descriptions, aliases), null, or the empty list Wikibase writes
 * for an empty map: ``read`` reads the value of ``config->lang`` where there is one. */
static CHECKED int language_map(Scan *s, const Config *config, LanguageReader read, void *out) {
    const Name names[] = {{config->lang, (Py_ssize_t)strlen(config->lang)}, NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result, was_list;
    if (is_null(s))
        return OK;
    TRY(empty_list(s, &was_list));
    if (was_list)
        return OK;
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK)
        TRY(read(s, out));
    return result == DONE ? OK : result;
}

/* A label or a description: {"value": ...} as a str into *out, or null. */
static CHECKED int one_text(Scan *s, void *out) {
    return is_null(s) ? OK : text_value(s, (PyObject **)out);
}

/* A language's aliases: a list of {"value": ...}, each appended to the list ``out``. */
static CHECKED int alias_list(Scan *s, void *out) {
    int first = 1, result;
    TRY(enter(s, '['));
    while ((result = element(s, &first)) == OK) {
        PyObject *alias = NULL;
        TRY(text_value(s, &alias));
        int appended = PyList_Append((PyObject *)out, alias);
        Py_DECREF(alias);
        if (appended < 0)
            return ERR;
    }
    return result == DONE ? OK : result;
}

enum { NO_DATATYPE, ITEM, OTHER };

typedef struct { /* what the Python decoder's _Statement and _Snak structs hold */
    int datatype, deprecated, valued, has_qualifiers;
    Str snaktype;
    Ptr datavalue, datavalue_end, qualifiers, qualifiers_end;
} Statement;

static CHECKED int snak(Scan *s, Statement *out) {
    static const Name names[] = {
        NAME("snaktype"), NAME("datatype"), NAME("datavalue"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result;
    Str value;
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK) {
        if (which == 0) { /* snaktype */
            TRY(plain_string(s, &value));
            out->valued = is_word(&value, "value");
            out->snaktype = value;
        } else if (which == 1) { /* datatype */
            if (!is_null(s)) {
                TRY(plain_string(s, &value));
                out->datatype = is_word(&value, "wikibase-item") ? ITEM : OTHER;
            }
        } else { /* datavalue */
            ws(s);
            out->datavalue = s->p;
            TRY(skip(s));
            out->datavalue_end = s->p;
        }
    }
    if (result != DONE)
        return result;
    return fields.seen & 1 ? OK : ODD; /* snaktype is required */
}

static CHECKED int statement(Scan *s, Statement *out) {
    static const Name names[] = {
        NAME("mainsnak"), NAME("rank"), NAME("qualifiers"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result;
    Str value;
    memset(out, 0, sizeof *out);
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK) {
        if (which == 0) { /* mainsnak */
            TRY(snak(s, out));
        } else if (which == 1) { /* rank */
            TRY(plain_string(s, &value));
            out->deprecated = is_word(&value, "deprecated");
        } else { /* qualifiers */
            ws(s);
            out->qualifiers = s->p;
            out->has_qualifiers = !is_null(s);
            if (out->has_qualifiers)
                TRY(skip(s));
            out->qualifiers_end = s->p;
        }
    }
    if (result != DONE)
        return result;
    return fields.seen & 1 ? OK : ODD; /* mainsnak is required */
}

/* Q[1-9][0-9]* */
static int is_item_id(Ptr id, Py_ssize_t length) {
    if (length < 2 || id[0] != 'Q' || id[1] == '0')
        return 0;
    for (Py_ssize_t i = 1; i < length; i++)
        if (!is_digit(id[i]))
            return 0;
    return 1;
}

/* An item value as the dump writes it today: {"value": {"id": "Q..", "entity-type": ..,
 * "numeric-id": ..}, "type": "wikibase-entityid"}; its id as a str. Anything else, ODD. */
static CHECKED int entity_id(Scan *s, PyObject **out) {
    static const Name names[] = {
        NAME("id"), NAME("entity-type"), NAME("numeric-id"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result, integral;
    Str id = {0}, type;
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK) {
        if (which == 0) { /* id */
            TRY(string(s, &id));
        } else if (which == 1) { /* entity-type: a str or null */
            if (!is_null(s))
                TRY(string(s, &type));
        } else if (!is_null(s)) { /* numeric-id: an int or null */
            Ptr start = s->p;
            TRY(number(s, &integral));
            if (!integral || s->p - start > 18)
                return ODD;
        }
    }
    if (result != DONE)
        return result;
    if (!(fields.seen & 1) || id.escaped || !is_item_id(id.start, id.len))
        return ODD;
    *out = PyUnicode_DecodeUTF8((const char *)id.start, id.len, NULL);
    return *out == NULL ? ERR : OK;
}

static CHECKED int item_value(Ptr start, Ptr end, PyObject **out) {
    static const Name names[] = {NAME("type"), NAME("value"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    Scan s = {start, end, 0};
    int which, result;
    Str type;
    if (start == NULL)
        return ODD; /* no datavalue */
    TRY(enter(&s, '{'));
    while ((result = field(&s, &fields, &which)) == OK) {
        if (which == 0) { /* type */
            TRY(string(&s, &type));
            if (!is_word(&type, "wikibase-entityid"))
                return ODD;
        } else { /* value */
            TRY(entity_id(&s, out));
        }
    }
    if (result != DONE)
        return result;
    return fields.seen == 3 ? OK : ODD;
}

static int is_span_pid(const Str *pid, const Config *config) {
    Py_ssize_t count = PyTuple_GET_SIZE(config->span_pids);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *span = PyTuple_GET_ITEM(config->span_pids, i);
        if (PyBytes_GET_SIZE(span) == pid->len &&
            memcmp(PyBytes_AS_STRING(span), pid->start, pid->len) == 0)
            return 1;
    }
    return 0;
}

/* A list of snaks, validated. */
static CHECKED int snak_list(Scan *s) {
    int first = 1, result;
    Statement ignored;
    TRY(enter(s, '['));
    while ((result = element(s, &first)) == OK)
        TRY(snak(s, &ignored));
    return result == DONE ? OK : result;
}

/* Where the snak lists of the time qualifiers (P580 start, P582 end, P585 point in time) of
 * raw qualifiers are; the other qualifiers validated only. */
static CHECKED int qualifier_lists(Ptr start, Ptr end, Ptr lists[3][2]) {
    static const Name names[] = {NAME("P580"), NAME("P582"), NAME("P585"), NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    Scan s = {start, end, 0};
    int which, result;
    TRY(enter(&s, '{'));
    while ((result = field(&s, &fields, &which)) == OK) {
        ws(&s);
        lists[which][0] = s.p;
        TRY(snak_list(&s));
        lists[which][1] = s.p;
    }
    return result == DONE ? OK : result;
}

/* A validated snak list as ((snaktype, raw datavalue or b""), ...). */
static PyObject *time_snaks(Ptr start, Ptr end) {
    if (start == NULL) /* no such qualifier */
        return PyTuple_New(0);
    PyObject *snaks = PyList_New(0), *tuple = NULL;
    Scan s = {start, end, 0};
    int first = 1, result;
    Statement one;
    if (snaks == NULL)
        return NULL;
    if ((result = enter(&s, '[')) == OK)
        while ((result = element(&s, &first)) == OK) {
            memset(&one, 0, sizeof one);
            if ((result = snak(&s, &one)) != OK)
                break;
            Ptr value = one.datavalue ? one.datavalue : s.p;
            Py_ssize_t length = one.datavalue ? one.datavalue_end - value : 0;
            PyObject *type = text_of(&one.snaktype), *pair = NULL;
            if (type != NULL)
                pair = Py_BuildValue("(Oy#)", type, value, length);
            int appended = pair != NULL ? PyList_Append(snaks, pair) : -1;
            Py_XDECREF(type);
            Py_XDECREF(pair);
            if (appended < 0) {
                result = ERR;
                break;
            }
        }
    if (result == DONE)
        tuple = PyList_AsTuple(snaks);
    else if (result != ERR)
        unreadable("a time qualifier's snak list");
    Py_DECREF(snaks);
    return tuple;
}

/* (starts, ends, points): what the Python parser's _time_bounds reads. */
static PyObject *times_of(const Candidate *c) {
    PyObject *times[3] = {NULL, NULL, NULL}, *result = NULL;
    for (int i = 0; i < 3; i++)
        if ((times[i] = time_snaks(c->lists[i][0], c->lists[i][1])) == NULL)
            goto done;
    result = PyTuple_Pack(3, times[0], times[1], times[2]);
done:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(times[i]);
    return result;
}

/* The three raw snak lists, joined by a byte no JSON text holds: the key of their bounds. */
static PyObject *times_key(const Candidate *c) {
    Py_ssize_t size = 2;
    for (int i = 0; i < 3; i++)
        size += c->lists[i][0] ? c->lists[i][1] - c->lists[i][0] : 0;
    PyObject *key = PyBytes_FromStringAndSize(NULL, size);
    if (key == NULL)
        return NULL;
    char *out = PyBytes_AS_STRING(key);
    for (int i = 0; i < 3; i++) {
        if (c->lists[i][0]) {
            memcpy(out, c->lists[i][0], c->lists[i][1] - c->lists[i][0]);
            out += c->lists[i][1] - c->lists[i][0];
        }
        if (i < 2)
            *out++ = '\x01';
    }
    return key;
}

static CHECKED int candidate(const Statement *st, PyObject **pid, const Str *key, Found *found) {
    Candidate c = {0};
    int result = item_value(st->datavalue, st->datavalue_end, &c.object);
    if (result == OK)
        result = qualifier_lists(st->qualifiers, st->qualifiers_end, c.lists);
    if (result == OK && *pid == NULL && (*pid = text_of(key)) == NULL)
        result = ERR;
    if (result == OK && found->count == found->capacity) {
        Py_ssize_t capacity = found->capacity ? 2 * found->capacity : 8;
        Candidate *grown = PyMem_Realloc(found->candidates, capacity * sizeof *grown);
        if (grown == NULL) {
            PyErr_NoMemory();
            result = ERR;
        } else {
            found->candidates = grown, found->capacity = capacity;
        }
    }
    if (result != OK) {
        Py_XDECREF(c.object);
        return result;
    }
    c.pid = Py_NewRef(*pid);
    found->candidates[found->count++] = c;
    return OK;
}

/* The statements of a property the load reads: those of an item property become fact
 * candidates or skip counts, the others are only validated. */
static CHECKED int statements(Scan *s, const Str *key, Found *found) {
    int first = 1, result, datatype = NO_DATATYPE, index = 0;
    PyObject *pid = NULL;
    Statement st;
    if ((result = enter(s, '[')) != OK)
        return result;
    while ((result = element(s, &first)) == OK) {
        if ((result = statement(s, &st)) != OK)
            break;
        if (index++ == 0)
            datatype = st.datatype;
        if (datatype == OTHER)
            continue; /* the first statement's datatype is the property's */
        if (st.datatype == NO_DATATYPE) {
            result = ODD; /* an older dump: the value tells whether it is an item */
            break;
        }
        if (st.datatype != ITEM)
            continue;
        if (st.deprecated)
            found->deprecated++;
        else if (!st.valued)
            found->unvalued++;
        else if (!st.has_qualifiers)
            found->no_qualifier++;
        else if ((result = candidate(&st, &pid, key, found)) != OK)
            break;
    }
    Py_XDECREF(pid);
    return result == DONE ? OK : result;
}

/* The statements of a span property, validated, raw: the Python parser reads them. */
static CHECKED int span_statements(Scan *s, const Str *key, Found *found) {
    ws(s);
    Ptr start = s->p;
    int first = 1, result;
    Statement st;
    TRY(enter(s, '['));
    while ((result = element(s, &first)) == OK) {
        TRY(statement(s, &st));
        if (st.datatype != OTHER)
            return ODD; /* item-valued or untyped: possibly facts, left to Python */
    }
    if (result != DONE)
        return result;
    if (found->spans == NULL && (found->spans = PyDict_New()) == NULL)
        return ERR;
    PyObject *pid = text_of(key);
    PyObject *raw = PyBytes_FromStringAndSize((const char *)start, s->p - start);
    int stored = pid && raw ? PyDict_SetItem(found->spans, pid, raw) : -1;
    Py_XDECREF(pid);
    Py_XDECREF(raw);
    return stored < 0 ? ERR : OK;
}

/* A property id as one number, to find one seen twice (ids longer than 7 bytes, which
 * Wikidata has none of, are left to the Python parser). */
static uint64_t pid_code(const Str *key) {
    uint64_t code = (uint64_t)key->len << 56;
    for (Py_ssize_t i = 0; i < key->len; i++)
        code |= (uint64_t)key->start[i] << (8 * i);
    return code;
}

static CHECKED int claims(Scan *s, const Config *config, Found *found) {
    int first = 1, result, was_list, count = 0;
    Str key;
    uint64_t seen[MAX_PROPERTIES];
    TRY(empty_list(s, &was_list));
    if (was_list)
        return OK;
    TRY(enter(s, '{'));
    while ((result = member(s, &first, &key)) == OK) {
        if (key.escaped || key.len > 7 || count == MAX_PROPERTIES)
            return ODD;
        uint64_t code = pid_code(&key);
        for (int i = 0; i < count; i++)
            if (seen[i] == code)
                return ODD; /* a property twice */
        seen[count++] = code;
        if (is_span_pid(&key, config)) {
            TRY(span_statements(s, &key, found));
            continue;
        }
        int wanted = 1;
        if (config->relations != Py_None) {
            PyObject *pid = text_of(&key);
            if (pid == NULL)
                return ERR;
            wanted = PySet_Contains(config->relations, pid);
            Py_DECREF(pid);
            if (wanted < 0)
                return ERR;
        }
        /* A property the load does not read is only valid JSON to it, as to msgspec's Raw. */
        TRY(wanted ? statements(s, &key, found) : skip(s));
    }
    return result == DONE ? OK : result;
}

/* A str field of the entity (id, type): unescaped, as a Python str. */
static CHECKED int word(Scan *s, PyObject **out) {
    Str value;
    TRY(plain_string(s, &value));
    *out = text_of(&value);
    return *out == NULL ? ERR : OK;
}

static CHECKED int entity(Scan *s, const Config *config, Found *found) {
    static const Name names[] = {NAME("id"),      NAME("type"),         NAME("datatype"),
                                 NAME("labels"),  NAME("descriptions"), NAME("aliases"),
                                 NAME("claims"),  NO_MORE_NAMES};
    Fields fields = {names, 1, 0};
    int which, result;
    TRY(enter(s, '{'));
    while ((result = field(s, &fields, &which)) == OK) {
        switch (which) {
        case 0: /* id */
            TRY(word(s, &found->id));
            break;
        case 1: /* type */
            TRY(word(s, &found->type));
            break;
        case 2: /* datatype: a str or null */
            if (!is_null(s))
                TRY(word(s, &found->datatype));
            break;
        case 3: /* labels */
            TRY(language_map(s, config, one_text, &found->label));
            break;
        case 4: /* descriptions */
            TRY(language_map(s, config, one_text, &found->description));
            break;
        case 5: /* aliases */
            TRY(language_map(s, config, alias_list, found->aliases));
            break;
        default: /* claims */
            TRY(claims(s, config, found));
        }
    }
    if (result != DONE)
        return result;
    ws(s);
    if (s->p != s->end || (fields.seen & 3) != 3)
        return ODD; /* something after the entity, or no id or type */
    return OK;
}

static void clear(Found *found) {
    Py_CLEAR(found->type);
    Py_CLEAR(found->id);
    Py_CLEAR(found->datatype);
    Py_CLEAR(found->label);
    Py_CLEAR(found->description);
    Py_CLEAR(found->aliases);
    Py_CLEAR(found->spans);
    for (Py_ssize_t i = 0; i < found->count; i++) {
        Py_DECREF(found->candidates[i].pid);
        Py_DECREF(found->candidates[i].object);
    }
    PyMem_Free(found->candidates);
}

static PyObject *or_none(PyObject *value) { return value ? value : Py_None; }

/* What one cache entry is counted as beyond its key's bytes: the key's header, the dict's
 * slot, the bounds tuple and its ints (about 200 bytes on 64-bit CPython). */
#define ENTRY_BYTES 200

/* The bounds the scanners of a process remember, by the raw snak lists of their times: a
 * dict that counts the bytes of what a scanner put in it, so that it is bounded by bytes
 * however long or many the keys are. It outlives the scanners (one a block); the count
 * lives in it rather than in them so that a new scanner need not walk it. */
typedef struct {
    PyDictObject dict;
    Py_ssize_t budget, used;
} BoundsCache;

/* bounds remembered under key, the cache emptied first where it would go over its budget;
 * a key that alone would is not remembered. 0, or -1 with an exception set. */
static int remember(BoundsCache *cache, PyObject *key, PyObject *bounds) {
    Py_ssize_t size = ENTRY_BYTES + PyBytes_GET_SIZE(key);
    if (size > cache->budget)
        return 0;
    if (cache->used > cache->budget - size) {
        PyDict_Clear((PyObject *)cache);
        cache->used = 0;
    }
    if (PyDict_SetItem((PyObject *)cache, key, bounds) < 0)
        return -1;
    cache->used += size;
    return 0;
}

static int cache_init(BoundsCache *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"budget", NULL};
    Py_ssize_t budget;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n", names, &budget))
        return -1;
    if (budget < 0) {
        PyErr_SetString(PyExc_ValueError, "BoundsCache: budget must be >= 0");
        return -1;
    }
    PyDict_Clear((PyObject *)self);
    self->budget = budget, self->used = 0;
    return 0;
}

static PyObject *cache_clear(BoundsCache *self, PyObject *unused) {
    (void)unused;
    PyDict_Clear((PyObject *)self);
    self->used = 0;
    Py_RETURN_NONE;
}

static PyMethodDef cache_methods[] = {
    {"clear", (PyCFunction)cache_clear, METH_NOARGS, "Forget every entry; the count starts at 0."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef cache_members[] = {
    {"budget", T_PYSSIZET, offsetof(BoundsCache, budget), READONLY,
     "the most bytes the entries count for"},
    {"used", T_PYSSIZET, offsetof(BoundsCache, used), READONLY,
     "the bytes the entries count for: each its key's bytes plus 200"},
    {NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(cache_doc,
"BoundsCache(budget)\n--\n\n"
"A dict of the bounds scanners worked out, by the raw snak lists of the times (bytes). Each\n"
"entry a scanner adds counts for its key's bytes plus 200; one that would take the count\n"
"beyond budget empties the cache first, and one larger than budget alone is not kept. Only\n"
"the scanners' entries and clear() change the count.");

static PyTypeObject BoundsCacheType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chronoprobe.kg.io._dumpscan.BoundsCache",
    .tp_basicsize = sizeof(BoundsCache),
    .tp_flags = Py_TPFLAGS_DEFAULT, /* with the dict's garbage collection, inherited */
    .tp_doc = cache_doc,
    .tp_init = (initproc)cache_init,
    .tp_methods = cache_methods,
    .tp_members = cache_members,
    /* .tp_base = &PyDict_Type, set where the module is made */
};

typedef struct {
    PyObject_HEAD
    Config config;
    PyObject *lang, *time_bounds, *malformed, *entities, *facts;
    BoundsCache *cache;
    Py_ssize_t entity_width;
    long counts[3]; /* no_qualifier, deprecated, unvalued, of the lines finished here */
    int busy; /* a scan is under way: time_bounds is Python code, which may call back */
} Scanner;

/* The bounds of a candidate's times (a new reference): from the cache, or from the Python
 * parser's time_bounds. NULL with *result ODD where that raised one of the malformed
 * exceptions (a malformed time, which the Python parser reports), ERR with the exception set
 * where anything else went wrong: a bug is not taken for bad input. */
static PyObject *bounds_of(Scanner *self, const Candidate *c, int *result) {
    PyObject *key = times_key(c), *bounds = NULL, *times = NULL;
    *result = ERR;
    if (key == NULL)
        return NULL;
    if ((bounds = PyDict_GetItemWithError((PyObject *)self->cache, key)) != NULL) {
        Py_DECREF(key);
        return Py_NewRef(bounds);
    }
    if (!PyErr_Occurred() && (times = times_of(c)) != NULL) {
        bounds = PyObject_CallOneArg(self->time_bounds, times);
        Py_DECREF(times);
        if (bounds == NULL && PyErr_ExceptionMatches(self->malformed)) {
            PyErr_Clear();
            *result = ODD;
        }
    }
    if (bounds != NULL && remember(self->cache, key, bounds) < 0)
        Py_CLEAR(bounds);
    Py_DECREF(key);
    return bounds;
}

/* The fact rows of a line, if every candidate has bounds: OK, ODD where one has none (a skip,
 * a bad value) or its times raised, ERR. */
static CHECKED int fact_rows(Scanner *self, const Found *found, PyObject *rows) {
    for (Py_ssize_t i = 0; i < found->count; i++) {
        const Candidate *c = &found->candidates[i];
        int result;
        PyObject *bounds = bounds_of(self, c, &result);
        if (bounds == NULL)
            return result;
        if (!PyTuple_CheckExact(bounds)) {
            Py_DECREF(bounds);
            return ODD;
        }
        Py_ssize_t width = PyTuple_GET_SIZE(bounds);
        PyObject *row = PyTuple_New(3 + width);
        if (row == NULL) {
            Py_DECREF(bounds);
            return ERR;
        }
        PyTuple_SET_ITEM(row, 0, Py_NewRef(found->id));
        PyTuple_SET_ITEM(row, 1, Py_NewRef(c->pid));
        PyTuple_SET_ITEM(row, 2, Py_NewRef(c->object));
        for (Py_ssize_t j = 0; j < width; j++)
            PyTuple_SET_ITEM(row, 3 + j, Py_NewRef(PyTuple_GET_ITEM(bounds, j)));
        Py_DECREF(bounds);
        PyObject_GC_UnTrack(row); /* strs and ints: in no cycle, no work for the collector */
        PyList_SET_ITEM(rows, i, row);
    }
    return OK;
}

/* (id, label, aliases, description, then None up to the entity row's width). */
static PyObject *entity_row(const Scanner *self, const Found *found) {
    PyObject *row = PyTuple_New(self->entity_width);
    if (row == NULL)
        return NULL;
    PyObject *label = found->label && PyUnicode_GET_LENGTH(found->label) ? found->label : found->id;
    PyObject *first[4] = {found->id, label, found->aliases, or_none(found->description)};
    for (Py_ssize_t i = 0; i < self->entity_width; i++)
        PyTuple_SET_ITEM(row, i, Py_NewRef(i < 4 ? first[i] : Py_None));
    PyObject_GC_UnTrack(found->aliases); /* a list of strs, and a row of it, strs and None: */
    PyObject_GC_UnTrack(row);            /* in no cycle, no work for the collector */
    return row;
}

/* The rows of an item with no span property whose candidates all have bounds, added to the
 * scanner's lists: OK; ODD for a line the Python side finishes; ERR. */
static CHECKED int add_rows(Scanner *self, const Found *found) {
    Py_ssize_t length;
    const char *id = PyUnicode_AsUTF8AndSize(found->id, &length);
    if (id == NULL)
        return ERR;
    if (found->spans != NULL || PyUnicode_CompareWithASCIIString(found->type, "item") != 0 ||
        !is_item_id((Ptr)id, length) || self->entity_width < 4)
        return ODD;
    PyObject *rows = PyList_New(found->count), *row = NULL;
    if (rows == NULL)
        return ERR;
    int result = fact_rows(self, found, rows);
    if (result == OK && (row = entity_row(self, found)) == NULL)
        result = ERR;
    if (result == OK) {
        Py_ssize_t end = PyList_GET_SIZE(self->facts);
        if (PyList_SetSlice(self->facts, end, end, rows) < 0 ||
            PyList_Append(self->entities, row) < 0)
            result = ERR;
    }
    Py_XDECREF(row);
    Py_DECREF(rows);
    if (result == OK) {
        self->counts[0] += found->no_qualifier;
        self->counts[1] += found->deprecated;
        self->counts[2] += found->unvalued;
    }
    return result;
}

/* What the Python side reads of a line it finishes (see the class docstring). */
static PyObject *as_tuple(const Found *found) {
    PyObject *facts = PyList_New(found->count);
    if (facts == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < found->count; i++) {
        const Candidate *c = &found->candidates[i];
        PyObject *times = times_of(c), *fact = NULL;
        if (times != NULL)
            fact = PyTuple_Pack(3, c->pid, c->object, times);
        Py_XDECREF(times);
        if (fact == NULL) {
            Py_DECREF(facts);
            return NULL;
        }
        PyList_SET_ITEM(facts, i, fact);
    }
    return Py_BuildValue("(OOOOOON" "lllO)", found->type, found->id, or_none(found->datatype),
                         or_none(found->label), or_none(found->description), found->aliases,
                         facts, found->no_qualifier, found->deprecated, found->unvalued,
                         or_none(found->spans));
}

/* One line, buffer[start:stop]: True, None or a tuple, as scan says. */
static PyObject *scan_line(Scanner *self, Ptr start, Ptr stop) {
    Found found = {0};
    Scan s = {start, stop, 0};
    int result = (found.aliases = PyList_New(0)) ? entity(&s, &self->config, &found) : ERR;
    PyObject *answer = NULL;
    if (result == ODD) /* a line not understood: the Python parser reads it all */
        answer = Py_NewRef(Py_None);
    else if (result == OK && (result = add_rows(self, &found)) == OK)
        answer = Py_NewRef(Py_True);
    else if (result == ODD) /* understood, but the Python side finishes it */
        answer = as_tuple(&found);
    clear(&found);
    return answer;
}

/* A scan starts: the scanner set up and not already scanning, its buffer held (a bytearray
 * cannot be resized under it), and a reference to its time_bounds held for the whole scan.
 * A scan inside a scan (time_bounds calling scan again) is refused, as is __init__ during
 * one: either would change what the outer scan is reading. -1 with an exception set. */
static CHECKED int begin_scan(Scanner *self, PyObject *buffer, Py_buffer *view) {
    if (self->time_bounds == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner.__init__ was not called");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Scanner: scan called during a scan of the same scanner (from its "
                        "time_bounds?); a scanner reads one buffer at a time");
        return -1;
    }
    if (PyObject_GetBuffer(buffer, view, PyBUF_SIMPLE) < 0)
        return -1;
    Py_INCREF(self->time_bounds);
    self->busy = 1;
    return 0;
}

/* A scan ends: what begin_scan held is let go; the answer passed through. */
static PyObject *end_scan(Scanner *self, Py_buffer *view, PyObject *answer) {
    self->busy = 0;
    Py_DECREF(self->time_bounds); /* the same object: __init__ is refused while busy */
    PyBuffer_Release(view); /* only now: the candidates pointed into it */
    return answer;
}

static PyObject *scanner_scan(Scanner *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan takes buffer, start and stop");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), stop = PyLong_AsSsize_t(args[2]);
    if (((start == -1 || stop == -1) && PyErr_Occurred()) ||
        begin_scan(self, args[0], &view) < 0)
        return NULL;
    PyObject *answer = NULL;
    if (start < 0 || stop < start || stop > view.len)
        PyErr_SetString(PyExc_ValueError, "scan: start and stop out of the buffer");
    else
        answer = scan_line(self, (Ptr)view.buf + start, (Ptr)view.buf + stop);
    return end_scan(self, &view, answer);
}

/* What bytes.strip() strips. */
static int is_blank(unsigned char c) { return is_space(c) || c == 0x0B || c == 0x0C; }

static PyObject *scanner_scan_lines(Scanner *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scan_lines takes buffer and position");
        return NULL;
    }
    Py_ssize_t position = PyLong_AsSsize_t(args[1]), lines = 0;
    if ((position == -1 && PyErr_Occurred()) || begin_scan(self, args[0], &view) < 0)
        return NULL;
    Ptr base = view.buf;
    PyObject *answer = NULL;
    if (position < 0) {
        PyErr_SetString(PyExc_ValueError, "scan_lines: a negative position");
        goto done;
    }
    while (position < view.len) {
        Ptr newline = memchr(base + position, '\n', view.len - position);
        Py_ssize_t start = position, stop = newline ? newline - base : view.len;
        position = stop + 1, lines++;
        /* the entity: blanks and the trailing comma left out; none on a blank line, nor on
         * the dump's "[" and "]" lines */
        while (start < stop && is_blank(base[start]))
            start++;
        while (stop > start && is_blank(base[stop - 1]))
            stop--;
        if (stop > start && base[stop - 1] == ',')
            stop--;
        if (!(stop - start > 1 || (stop > start && base[start] != '[' && base[start] != ']')))
            continue;
        PyObject *scanned = scan_line(self, base + start, base + stop);
        if (scanned == NULL)
            goto done;
        if (scanned != Py_True) {
            answer = Py_BuildValue("(nnnnN)", position, lines, start, stop, scanned);
            goto done;
        }
        Py_DECREF(scanned);
    }
    answer = Py_BuildValue("(nnnnO)", position, lines, (Py_ssize_t)-1, (Py_ssize_t)-1, Py_None);
done:
    return end_scan(self, &view, answer);
}

/* An exception class, or a tuple of them (what PyErr_ExceptionMatches takes). */
static int are_exceptions(PyObject *classes) {
    if (!PyTuple_Check(classes))
        return PyExceptionClass_Check(classes);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(classes); i++)
        if (!PyExceptionClass_Check(PyTuple_GET_ITEM(classes, i)))
            return 0;
    return 1;
}

static int scanner_init(Scanner *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"lang", "span_pids", "relations", "time_bounds", "malformed",
                            "cache", "entities", "facts", "entity_width", NULL};
    PyObject *lang, *span_pids, *relations, *time_bounds, *malformed, *cache, *entities, *facts;
    Py_ssize_t width;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner.__init__ called during a scan");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!OOOO!O!O!n", names, &PyBytes_Type,
                                     &lang, &PyTuple_Type, &span_pids, &relations, &time_bounds,
                                     &malformed, &BoundsCacheType, &cache, &PyList_Type,
                                     &entities, &PyList_Type, &facts, &width))
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(span_pids); i++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(span_pids, i))) {
            PyErr_SetString(PyExc_TypeError, "span_pids must hold bytes");
            return -1;
        }
    if (relations != Py_None && !PyAnySet_Check(relations)) {
        PyErr_SetString(PyExc_TypeError, "relations must be a set or None");
        return -1;
    }
    if (!PyCallable_Check(time_bounds) || width < 4) {
        PyErr_SetString(PyExc_TypeError, "time_bounds must be callable, entity_width >= 4");
        return -1;
    }
    if (!are_exceptions(malformed)) {
        PyErr_SetString(PyExc_TypeError, "malformed must be an exception class or a tuple of them");
        return -1;
    }
    Py_XSETREF(self->lang, Py_NewRef(lang));
    Py_XSETREF(self->config.span_pids, Py_NewRef(span_pids));
    Py_XSETREF(self->config.relations, Py_NewRef(relations));
    Py_XSETREF(self->time_bounds, Py_NewRef(time_bounds));
    Py_XSETREF(self->malformed, Py_NewRef(malformed));
    Py_XSETREF(self->cache, (BoundsCache *)Py_NewRef(cache));
    Py_XSETREF(self->entities, Py_NewRef(entities));
    Py_XSETREF(self->facts, Py_NewRef(facts));
    self->config.lang = PyBytes_AS_STRING(lang);
    self->entity_width = width;
    memset(self->counts, 0, sizeof self->counts);
    return 0;
}

/* The collector's view of a scanner: what it refers to can refer back to it (time_bounds a
 * bound method of an object holding the scanner, the scanner appended to its own lists), so
 * the type takes part in garbage collection. */
static int scanner_traverse(Scanner *self, visitproc visit, void *arg) {
    Py_VISIT(self->lang);
    Py_VISIT(self->config.span_pids);
    Py_VISIT(self->config.relations);
    Py_VISIT(self->time_bounds);
    Py_VISIT(self->malformed);
    Py_VISIT(self->cache);
    Py_VISIT(self->entities);
    Py_VISIT(self->facts);
    return 0;
}

/* Breaks a cycle; the scanner is then as if __init__ had not been called (scans refuse). */
static int scanner_clear(Scanner *self) {
    Py_CLEAR(self->time_bounds); /* first: begin_scan tells set-up by it */
    Py_CLEAR(self->lang);
    Py_CLEAR(self->config.span_pids);
    Py_CLEAR(self->config.relations);
    Py_CLEAR(self->malformed);
    Py_CLEAR(self->cache);
    Py_CLEAR(self->entities);
    Py_CLEAR(self->facts);
    self->config.lang = NULL;
    return 0;
}

static void scanner_dealloc(Scanner *self) {
    PyObject_GC_UnTrack(self);
    scanner_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *scanner_counts(Scanner *self, void *closure) {
    (void)closure;
    return Py_BuildValue("(lll)", self->counts[0], self->counts[1], self->counts[2]);
}

PyDoc_STRVAR(scan_doc,
"scan(buffer, start, stop, /)\n--\n\n"
"Read the dump line buffer[start:stop] (blanks and its trailing comma left out).\n\n"
"True: an item whose rows were appended to entities and facts (its skips to counts). None:\n"
"a line the Python parser must read whole. Otherwise a line the Python side finishes, as\n"
"(type, id, datatype, label, description, aliases, facts, no_qualifier, deprecated,\n"
"unvalued, spans): facts a list of (pid, object id, (starts, ends, points)), each of the\n"
"three a tuple of (snaktype, raw datavalue or b\"\") of the snaks of P580, P582 and P585;\n"
"the counts of the item statements that are no fact; spans a dict of pid to the raw\n"
"statement list of each span property, or None.");

PyDoc_STRVAR(scan_lines_doc,
"scan_lines(buffer, position, /)\n--\n\n"
"Scan the lines of buffer from position on, up to the first one the Python side must read\n"
"(None or a tuple from scan), and return (position after that line, lines passed, that\n"
"line's entity start, its stop, what scan gave). At the end of the buffer: start and stop\n"
"are -1 and what scan gave is None. Lines are counted as bytes.split(b\"\\n\") counts them,\n"
"an entity is a line stripped of blanks and its trailing comma, not \"[\" nor \"]\".");

static PyMethodDef scanner_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scanner_scan, METH_FASTCALL, scan_doc},
    {"scan_lines", (PyCFunction)(void (*)(void))scanner_scan_lines, METH_FASTCALL,
     scan_lines_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scanner_getset[] = {
    {"counts", (getter)scanner_counts, NULL,
     "(no_qualifier, deprecated, unvalued): item statements that are no fact, on the lines "
     "whose rows the scanner appended", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(scanner_doc,
"Scanner(lang, span_pids, relations, time_bounds, malformed, cache, entities, facts,\n"
"        entity_width)\n--\n\n"
"Reads dump lines for one parse: lang, the language code as bytes; span_pids, a tuple of\n"
"property ids as bytes whose statements go back raw; relations, a frozenset of the property\n"
"ids (str) whose statements are read, or None for all; time_bounds, the function giving\n"
"a fact's bound columns from its (starts, ends, points); malformed, the exception class\n"
"(or tuple of them) it raises for a malformed time, whose line then goes back to Python\n"
"(any other exception propagates out of the scan); cache, the BoundsCache its answers are\n"
"remembered in; entities and facts, the lists rows are appended to; entity_width, the\n"
"length of an entity row. A scanner reads one buffer at a time: a scan called from inside\n"
"a scan (from time_bounds) raises RuntimeError, as __init__ does.");

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chronoprobe.kg.io._dumpscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = scanner_doc,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)scanner_init,
    .tp_dealloc = (destructor)scanner_dealloc,
    .tp_traverse = (traverseproc)scanner_traverse,
    .tp_clear = (inquiry)scanner_clear,
    .tp_methods = scanner_methods,
    .tp_getset = scanner_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_dumpscan",
    .m_doc = "The compiled one-pass scanner of Wikidata dump lines (see Scanner).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__dumpscan(void) {
    BoundsCacheType.tp_base = &PyDict_Type;
    if (PyType_Ready(&BoundsCacheType) < 0 || PyType_Ready(&ScannerType) < 0)
        return NULL;
    PyObject *created = PyModule_Create(&module);
    if (created != NULL &&
        (PyModule_AddObjectRef(created, "Scanner", (PyObject *)&ScannerType) < 0 ||
         PyModule_AddObjectRef(created, "BoundsCache", (PyObject *)&BoundsCacheType) < 0 ||
         PyModule_AddIntConstant(created, "STRING_RUN", RUN) < 0)) /* 16: SSE2; 8: portable */
        Py_CLEAR(created);
    return created;
}
