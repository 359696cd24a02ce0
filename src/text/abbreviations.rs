//! Abbreviations after which a full stop does not end a sentence, per source language.
//!
//! Two kinds, as in the Moses `nonbreaking_prefix` lists: `prefixes` (titles and the like, which are
//! followed by a name: "Sr. López", "Dr. Smith") never end a sentence; `numeric` ones only stay
//! attached when a number follows ("pág. 12", "No. 5"). Abbreviations that often do end a sentence
//! ("etc.", "EE. UU.", "Inc.") are in neither list: the Unicode rules already keep them inside a
//! sentence when a lower-case word follows, and a capital after them usually starts a new one.
//! Single letters ("J. K. Rowling", "a. C.") are treated as initials in every language.

/// One language's lists. Entries are written as usually spelled, without the final dot; a
/// token matches an entry spelled the same, capitalised, or all in capitals (shouted posts).
#[derive(Debug)]
pub(crate) struct Abbreviations {
    prefixes: &'static [&'static str],
    numeric: &'static [&'static str],
}

impl Abbreviations {
    /// Whether `token` (the word before a full stop, without the stop) never ends a sentence.
    pub fn is_prefix(&self, token: &str) -> bool {
        self.prefixes.iter().any(|e| matches_entry(token, e))
    }

    /// Whether `token` stays attached to a number that follows it.
    pub fn is_numeric(&self, token: &str) -> bool {
        self.numeric.iter().any(|e| matches_entry(token, e))
    }
}

fn matches_entry(token: &str, entry: &str) -> bool {
    if token == entry {
        return true;
    }
    let mut entry_chars = entry.chars();
    let capitalised = match entry_chars.next() {
        Some(first) => first.to_uppercase().chain(entry_chars).eq(token.chars()),
        None => false,
    };
    capitalised
        || (token.chars().any(char::is_alphabetic) && token == entry.to_uppercase() && token.to_uppercase() == token)
}

pub(crate) fn for_language(code: &str) -> &'static Abbreviations {
    match code {
        "es" => &SPANISH,
        "en" => &ENGLISH,
        "fr" => &FRENCH,
        "de" => &GERMAN,
        "it" => &ITALIAN,
        "pt" => &PORTUGUESE,
        _ => &OTHER,
    }
}

static SPANISH: Abbreviations = Abbreviations {
    prefixes: &[
        "Sr", "Sra", "Srta", "Sres", "Sras", "Srs", "Dr", "Dra", "Dres", "Drs", "Dña", "Da", "Ud", "Uds", "Vd", "Vds",
        "Lic", "Licda", "Ing", "Arq", "Prof", "Profa", "Mtro", "Mtra", "Excmo", "Excma", "Ilmo", "Ilma", "Rvdo", "Sto",
        "Sta", "Gral", "Cnel", "Tte", "Mons", "Av", "Avda", "Pza", "Cía", "Dpto", "Depto", "aprox", "ej", "p.ej", "vs",
        "cf", "EE", "Mr", "Mrs",
    ],
    numeric: &["art", "núm", "nº", "n", "p", "pp", "pág", "págs", "cap", "vol", "fig", "tel", "tfno", "c", "cta"],
};

static ENGLISH: Abbreviations = Abbreviations {
    prefixes: &[
        "Mr", "Mrs", "Ms", "Messrs", "Mmes", "Dr", "Drs", "Prof", "St", "Mt", "Ft", "Jr", "Sr", "Gen", "Rep", "Sen",
        "Gov", "Pres", "Capt", "Lt", "Col", "Maj", "Sgt", "Cpl", "Adm", "Cmdr", "Rev", "Hon", "Supt", "Insp", "vs",
        "v", "e.g", "i.e", "cf", "viz", "approx", "Ave", "Blvd",
    ],
    numeric: &[
        "No", "Nos", "Vol", "vol", "pp", "p", "Art", "art", "Sec", "sec", "Ch", "ch", "Fig", "fig", "Eq", "Ref", "Jan",
        "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    ],
};

static FRENCH: Abbreviations = Abbreviations {
    prefixes: &[
        "M", "MM", "Mme", "Mmes", "Mlle", "Mlles", "Dr", "Pr", "Me", "Mgr", "St", "Ste", "av", "bd", "cf", "ex",
    ],
    numeric: &["art", "n", "no", "p", "pp", "vol", "chap", "fig", "tél"],
};

static GERMAN: Abbreviations = Abbreviations {
    prefixes: &[
        "Dr", "Prof", "Hr", "Hrn", "Fr", "Frl", "St", "z.B", "bzw", "ca", "vgl", "u.a", "d.h", "z.T", "u.U", "evtl",
        "ggf", "inkl", "bzgl", "Str",
    ],
    numeric: &["Nr", "S", "Abs", "Art", "Bd", "Kap", "Abb", "Tel"],
};

static ITALIAN: Abbreviations = Abbreviations {
    prefixes: &[
        "Sig", "Sigg", "Sig.ra", "Sig.na", "Dott", "Dott.ssa", "Prof", "Prof.ssa", "Avv", "Ing", "Geom", "On", "S",
        "ca", "cfr",
    ],
    numeric: &["art", "n", "pag", "pagg", "p", "cap", "vol", "fig", "tel"],
};

static PORTUGUESE: Abbreviations = Abbreviations {
    prefixes: &[
        "Sr", "Sra", "Srta", "Srs", "Dr", "Dra", "Drs", "Prof", "Profa", "Eng", "Exmo", "Exma", "Av", "Sto", "Sta",
        "p.ex", "ex", "cf",
    ],
    numeric: &["art", "n", "nº", "p", "pp", "pág", "págs", "cap", "vol", "fig", "tel"],
};

/// Languages without a list of their own get the titles common to many European languages.
static OTHER: Abbreviations =
    Abbreviations { prefixes: &["Dr", "Prof", "Mr", "Mrs", "Ms", "St"], numeric: &["No", "Nr", "p", "pp"] };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_spelled_capitalised_and_shouted_forms() {
        let es = for_language("es");
        assert!(es.is_prefix("Sr") && es.is_prefix("SR") && es.is_prefix("Sra"));
        assert!(es.is_prefix("ej") && es.is_prefix("Ej") && es.is_prefix("EJ"));
        assert!(!es.is_prefix("sr.") && !es.is_prefix("etc") && !es.is_prefix("UU") && !es.is_prefix(""));
        assert!(es.is_numeric("pág") && es.is_numeric("Art") && !es.is_numeric("no"));
        let en = for_language("en");
        assert!(en.is_numeric("No") && !en.is_numeric("no"));
        assert!(en.is_prefix("e.g") && en.is_prefix("Mr") && !en.is_prefix("etc"));
        assert!(for_language("xx").is_prefix("Dr"));
    }
}
