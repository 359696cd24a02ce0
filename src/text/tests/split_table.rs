//! The sentence splitter against a table of Spanish and English cases with the expected splits.

use crate::text::sentences::split;
use crate::text::writing::Lang;

/// (language, text, expected sentences).
const CASES: &[(&str, &str, &[&str])] = &[
    // Spanish: abbreviations.
    (
        "es",
        "Me quiero unir al coro de alabanzas para el Sr. Whitehead.",
        &["Me quiero unir al coro de alabanzas para el Sr. Whitehead."],
    ),
    ("es", "La Sra. Swiebel lo ha dejado claro. Gracias.", &["La Sra. Swiebel lo ha dejado claro.", "Gracias."]),
    ("es", "Habló el Dr. García. Luego votamos.", &["Habló el Dr. García.", "Luego votamos."]),
    (
        "es",
        "El Sr. López y la Sra. García llegaron. Todos aplaudieron.",
        &["El Sr. López y la Sra. García llegaron.", "Todos aplaudieron."],
    ),
    ("es", "Hablaron el Excmo. Sr. Presidente y otros.", &["Hablaron el Excmo. Sr. Presidente y otros."]),
    ("es", "Ud. tiene razón. Lo siento.", &["Ud. tiene razón.", "Lo siento."]),
    ("es", "EL SR. LÓPEZ HA LLEGADO. BIENVENIDO.", &["EL SR. LÓPEZ HA LLEGADO.", "BIENVENIDO."]),
    ("es", "Frutas, p. ej. manzanas y peras.", &["Frutas, p. ej. manzanas y peras."]),
    ("es", "Hay muchos países, p. ej. Francia y Alemania.", &["Hay muchos países, p. ej. Francia y Alemania."]),
    ("es", "Compramos pan, leche, etc. y volvimos.", &["Compramos pan, leche, etc. y volvimos."]),
    ("es", "Compramos pan, leche, etc. Luego volvimos.", &["Compramos pan, leche, etc.", "Luego volvimos."]),
    ("es", "Viajó a EE. UU. el año pasado.", &["Viajó a EE. UU. el año pasado."]),
    ("es", "Viajó a EE. UU. Después volvió.", &["Viajó a EE. UU.", "Después volvió."]),
    ("es", "Véase la pág. 12. Nada más.", &["Véase la pág. 12.", "Nada más."]),
    ("es", "Tel. 600 000 000. Llámame.", &["Tel. 600 000 000.", "Llámame."]),
    ("es", "Lo firmó J. K. Rowling en Londres.", &["Lo firmó J. K. Rowling en Londres."]),
    ("es", "Nació en el 300 a. C. y murió joven.", &["Nació en el 300 a. C. y murió joven."]),
    ("es", "Llegó a las 9 a.m. y se fue.", &["Llegó a las 9 a.m. y se fue."]),
    // Spanish: numbers.
    ("es", "El PIB creció un 3.5 por ciento. Es poco.", &["El PIB creció un 3.5 por ciento.", "Es poco."]),
    ("es", "El PIB creció un 3,5 %. Es poco.", &["El PIB creció un 3,5 %.", "Es poco."]),
    ("es", "Son 1.500 € a las 18:30. Pagad ya.", &["Son 1.500 € a las 18:30.", "Pagad ya."]),
    ("es", "La versión 2.0 salió ayer. Funciona.", &["La versión 2.0 salió ayer.", "Funciona."]),
    ("es", "Hay 70.000 personas en el registro.", &["Hay 70.000 personas en el registro."]),
    // Spanish: ellipses.
    ("es", "Bueno... ya veremos.", &["Bueno... ya veremos."]),
    ("es", "Bueno... Ya veremos.", &["Bueno...", "Ya veremos."]),
    ("es", "Bueno… ya veremos.", &["Bueno… ya veremos."]),
    ("es", "Bueno… Ya veremos.", &["Bueno…", "Ya veremos."]),
    ("es", "Pues… ¿Y ahora qué?", &["Pues…", "¿Y ahora qué?"]),
    (
        "es",
        "En los últimos años los ciudadanos de la Unión Europea...",
        &["En los últimos años los ciudadanos de la Unión Europea..."],
    ),
    // Spanish: questions, exclamations, quotes, dialogue.
    ("es", "¿Qué hora es? Son las tres.", &["¿Qué hora es?", "Son las tres."]),
    ("es", "¡Qué bien! ¿Vienes?", &["¡Qué bien!", "¿Vienes?"]),
    ("es", "¿Sí? ¿No? Quizás.", &["¿Sí?", "¿No?", "Quizás."]),
    (
        "es",
        "¿Ha tratado el Consejo este asunto???? hubiera preferido que se lograra para 2012.",
        &["¿Ha tratado el Consejo este asunto????", "hubiera preferido que se lograra para 2012."],
    ),
    ("es", "¡¡¡LA AMPLIACIÓN DE 2004 FUE UN ÉXITO!!!", &["¡¡¡LA AMPLIACIÓN DE 2004 FUE UN ÉXITO!!!"]),
    (
        "es",
        "¡¡¡¿DE RELLENAR INCORRECTAMENTE LOS FORMULARIOS?!!!",
        &["¡¡¡¿DE RELLENAR INCORRECTAMENTE LOS FORMULARIOS?!!!"],
    ),
    ("es", "Dijo: «Me voy.» Y se fue.", &["Dijo: «Me voy.»", "Y se fue."]),
    ("es", "«Es el fin». Eso dijo.", &["«Es el fin».", "Eso dijo."]),
    ("es", "«¿Vienes?», preguntó.", &["«¿Vienes?», preguntó."]),
    ("es", "«¿Vienes?» preguntó ella.", &["«¿Vienes?» preguntó ella."]),
    ("es", "—¿Vienes? —preguntó él.", &["—¿Vienes? —preguntó él."]),
    ("es", "—¿Vienes? —Sí, ahora voy.", &["—¿Vienes?", "—Sí, ahora voy."]),
    ("es", "Tendría que esperar a Polonia ».", &["Tendría que esperar a Polonia »."]),
    ("es", "¿Conocen la película \"Jules y Jim\"? Yo sí.", &["¿Conocen la película \"Jules y Jim\"?", "Yo sí."]),
    ("es", "(Véase el anexo.) Luego seguimos.", &["(Véase el anexo.)", "Luego seguimos."]),
    // Spanish: no final punctuation, no space, spacing, emoji.
    ("es", "Tenemos que luchar contra estos viles delitos", &["Tenemos que luchar contra estos viles delitos"]),
    ("es", "Hola!!!¿Qué tal?", &["Hola!!!¿Qué tal?"]),
    ("es", "Fin.\tOtra frase.", &["Fin.", "Otra frase."]),
    ("es", "Uno.  Dos.", &["Uno.", "Dos."]),
    ("es", "Hay uuuuuun motivo de peso. 👍🏽", &["Hay uuuuuun motivo de peso. 👍🏽"]),
    ("es", "Gracias por todo 🙏", &["Gracias por todo 🙏"]),
    ("es", "¡Gracias! 🙏🙏 Nos vemos.", &["¡Gracias!", "🙏🙏 Nos vemos."]),
    (
        "es",
        "Como en el cine: Rambo I, Rambo II??? esto es crucial.",
        &["Como en el cine: Rambo I, Rambo II???", "esto es crucial."],
    ),
    (
        "es",
        "Deseo daaar la enhorabuena al Sr. von Wogau porque a las 11 horas le será impuesta la Legión de Honor.",
        &["Deseo daaar la enhorabuena al Sr. von Wogau porque a las 11 horas le será impuesta la Legión de Honor."],
    ),
    ("es", "Es decir... nada.", &["Es decir... nada."]),
    ("es", "Lo sé. ¿Y tú?", &["Lo sé.", "¿Y tú?"]),
    // English.
    ("en", "Hello. Goodbye.", &["Hello.", "Goodbye."]),
    ("en", "Mr. Smith went to Washington. He stayed.", &["Mr. Smith went to Washington.", "He stayed."]),
    ("en", "Dr. Jones and Mrs. Brown met at 5 p.m. yesterday.", &["Dr. Jones and Mrs. Brown met at 5 p.m. yesterday."]),
    ("en", "It was 5 p.m. The sun was setting.", &["It was 5 p.m.", "The sun was setting."]),
    ("en", "Mr. and Mrs. Smith arrived. They sat.", &["Mr. and Mrs. Smith arrived.", "They sat."]),
    ("en", "Prof. Brown teaches at MIT. Students love him.", &["Prof. Brown teaches at MIT.", "Students love him."]),
    ("en", "St. Patrick's Day is fun. Join us!", &["St. Patrick's Day is fun.", "Join us!"]),
    ("en", "J. R. R. Tolkien wrote it. It is long.", &["J. R. R. Tolkien wrote it.", "It is long."]),
    ("en", "See e.g. The Guardian for details.", &["See e.g. The Guardian for details."]),
    ("en", "I bought apples, pears, etc. Then I went home.", &["I bought apples, pears, etc.", "Then I went home."]),
    ("en", "She lives in the U.S. and works there.", &["She lives in the U.S. and works there."]),
    ("en", "See Fig. 3. It shows the data.", &["See Fig. 3.", "It shows the data."]),
    ("en", "The meeting is on Jan. 5 at noon.", &["The meeting is on Jan. 5 at noon."]),
    ("en", "The vote is on No. 12. Please attend.", &["The vote is on No. 12.", "Please attend."]),
    ("en", "It costs $3.50. That's cheap.", &["It costs $3.50.", "That's cheap."]),
    ("en", "The value is 3.14159 and stable.", &["The value is 3.14159 and stable."]),
    ("en", "Version 1.2.3 was released. Update now.", &["Version 1.2.3 was released.", "Update now."]),
    ("en", "Call me at 555-0100. Or email.", &["Call me at 555-0100.", "Or email."]),
    ("en", "Wait... what?", &["Wait... what?"]),
    ("en", "Wait... What happened?", &["Wait...", "What happened?"]),
    ("en", "Well… Maybe.", &["Well…", "Maybe."]),
    ("en", "Really?! No way!", &["Really?!", "No way!"]),
    ("en", "I love it!!! Best day ever.", &["I love it!!!", "Best day ever."]),
    ("en", "He said \"Stop.\" Then he left.", &["He said \"Stop.\"", "Then he left."]),
    ("en", "He asked, \"Are you coming?\" and left.", &["He asked, \"Are you coming?\" and left."]),
    ("en", "(This is an aside.) Back to the point.", &["(This is an aside.)", "Back to the point."]),
    ("en", "No final punctuation here", &["No final punctuation here"]),
    ("en", "Thanks for everything 🙏", &["Thanks for everything 🙏"]),
    ("en", "Great job! 🎉🎉", &["Great job! 🎉🎉"]),
    ("en", "Yahoo!Mail is old.", &["Yahoo!Mail is old."]),
    ("en", "The café serves tea.  It's nice.", &["The café serves tea.", "It's nice."]),
];

#[test]
fn splits_as_the_table_says() {
    let mut failures = Vec::new();
    for (lang, text, want) in CASES {
        let lang = Lang::parse(lang, "source").unwrap();
        let got: Vec<&str> = split(text, &lang).into_iter().map(|r| &text[r]).collect();
        if got != *want {
            failures.push(format!("{text:?}\n   want {want:?}\n    got {got:?}"));
        }
    }
    let (es, en) = (CASES.iter().filter(|c| c.0 == "es").count(), CASES.iter().filter(|c| c.0 == "en").count());
    assert!(es + en >= 60 && es >= 25 && en >= 25, "the table must keep at least 60 cases ({es} es, {en} en)");
    assert!(failures.is_empty(), "{} of {} cases split wrongly:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}
